"""What memory at a date, and who wrote a line, say."""

from __future__ import annotations

# Memory at a date, and who wrote a line (history.py, blame.py).
HISTORY_BEFORE_FIRST = "memory did not exist yet at {when}: the first commit on {ref} is from {first}"
HISTORY_BAD_PATH = "{path!r} is not a path inside memory (no '..', no absolute paths, nothing under .git)"
HISTORY_NOT_IN_MEMORY = "{path} is not a file in memory {where}{hint}"
HISTORY_IS_FOLDER = " (it is a folder: `memrepo at DATE` lists files)"
HISTORY_WHERE_AT = "at {when} (commit {sha})"
HISTORY_BLAME_FAILED = "cannot tell who wrote the lines of {path}: git blame failed ({problem})"
