"""The three-way merge: lines (`lines`) and memory files, markdown-aware (`markdown`). Pure."""
