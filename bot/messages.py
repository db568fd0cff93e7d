"""Every sentence memrepo says to a person or an agent, in one place.

Validation messages that Letta Code's memory filesystem also prints are kept word for word,
so a repository one tool writes reads the same in the other.
"""

from __future__ import annotations

VALIDATION_HEADER = "Frontmatter validation failed:"

# Letta Code's messages (memfs-format.md), verbatim.
MISSING_FRONTMATTER = "missing frontmatter (must start with ---)"
UNCLOSED_FRONTMATTER = "frontmatter opened but never closed (missing closing ---)"
READ_ONLY_FILE = "file is read_only and cannot be modified"
UNKNOWN_KEY = "unknown frontmatter key '{key}' (allowed: description read_only limit)"
READ_ONLY_CHANGED = "'read_only' is a protected field and cannot be changed by the agent"
READ_ONLY_SET = "'read_only' is a protected field and cannot be set by the agent"
READ_ONLY_REMOVED = "'read_only' is a protected field and cannot be removed by the agent"
EMPTY_DESCRIPTION = "'description' must not be empty"
MISSING_DESCRIPTION = "missing required field 'description'"
FLAT_SKILL = "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"

# memrepo's own rules.
NOT_UTF8 = (
    "not valid UTF-8 (first bad byte 0x{byte:02x} at offset {offset}); "
    "memory files must be UTF-8 text"
)
BINARY = "contains a NUL byte; memory files must be text, not binary data"
BAD_YAML = "frontmatter is not valid YAML: {problem}"
NOT_MAPPING = "frontmatter must be a YAML mapping of keys to values, found {kind}"
DESCRIPTION_NOT_TEXT = "'description' must be text, found {kind}"
READ_ONLY_NOT_BOOL = "'read_only' must be true or false, found {kind}"
LIMIT_NOT_INT = "'limit' must be a positive whole number, found {value!r}"
FILE_TOO_LARGE = (
    "file has {size:,} characters, over the limit of {limit:,} "
    "(limits.file_chars in .memrepo/config.yml); split it or move detail to external memory"
)
CORE_TOO_LARGE = (
    "system/ holds {size:,} characters in all, over the limit of {limit:,} "
    "(limits.core_chars in .memrepo/config.yml); move detail out of system/ into external memory"
)
TOO_DEEP = (
    "{depth} folders deep under system/, over the limit of {limit} "
    "(limits.system_depth in .memrepo/config.yml); use a flatter path"
)
BAD_CONFIG = ".memrepo/config.yml: {problem}"

# Paths given to the memory tool.
PATH_EMPTY = "path is empty; give a path such as system/human.md"
PATH_NUL = "path contains a NUL character"
PATH_ABSOLUTE = "path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"
PATH_HOME = "path '{path}' refers to a home folder; give a path inside the memory repository"
PATH_PARENT = "path '{path}' contains '..'; paths must stay inside the memory repository"
PATH_RESERVED = "path '{path}' is inside {area}, which the memory tool does not write"
PATH_SYMLINK = "path '{path}' goes through a symbolic link that points outside the memory repository"
PATH_BAD_CHARS = "path '{path}' contains a control character"
PATH_TOO_LONG = "path '{path}' is longer than {limit} characters"

# Opening a repository.
REPO_MISSING = "no memory repository at {path}: the folder does not exist (create one with `memrepo init {path}`)"
REPO_NOT_DIR = "{path} is a file, not a memory repository folder"
REPO_NOT_GIT = "{path} is not a git repository (create a memory repository with `memrepo init`)"
REPO_BARE = "{path} is a bare git repository; give the path of a memory repository's working clone"
REPO_NO_COMMITS = "{path} has no commits yet; `memrepo init` makes the first one"
REPO_NOT_MEMORY = (
    "{path} is a git repository but not a memory repository (it has neither system/ nor "
    ".memrepo/); run `memrepo init` in an empty folder"
)
REPO_LOCKED = "another memrepo writer has held {path} for too long; try again in a moment"
HEAD_MOVED = "the repository's HEAD moved while this change was being made; nothing was changed, try again"

# The command line.
CLI_DESCRIPTION = (
    "Agent memory as a git repository of markdown files that people review, audit and trust."
)
INTERNAL_ERROR = (
    "memrepo: internal error ({error}); nothing was reported as saved. "
    "Run again with MEMREPO_DEBUG=1 to see where it happened."
)
