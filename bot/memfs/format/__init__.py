"""What a memory may hold: the two layouts, a file's frontmatter and body, paths, Letta's constraints,
validation, archival files. Pure rules, no git."""
