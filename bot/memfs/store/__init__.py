"""The memory repository on disk: git through libgit2 (`repo`), refs read from files, a commit read
through the git command, and the changes `validate` checks."""
