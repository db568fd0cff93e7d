"""What the format rules say of a file or a path: frontmatter, memrepo's own rules, Letta
Code's memory constraints (`.memfs.config.json`), the MemFS v2 layout (root `MEMORY.md`),
paths memory may hold, and MemGPT's archival files.

Where Letta Code prints a message, it is kept here word for word (memrepo names a problem the
way Letta does, so a person who reads one tool's refusal understands the other's); a
message shown after a path is written without it (the validator puts `path: ` in front).
"""

from __future__ import annotations

# ---------------------------------------------------------------- Letta's constraints
# Its validator (letta-memory-constraints.cjs), verbatim.
DEPTH_EXCEEDS = "depth {depth} exceeds maxDepth {limit}"
CHARS_EXCEED = "{count} characters exceeds {limit} from {source}"
SOURCE_MAX_FILE = "maxFileCharacters"
SOURCE_GLOB = "glob '{pattern}'"
SOURCE_MAX_CORE = "maxCoreMemoryCharacters"
CORE_PATH = "core memory"
CONFIG_PROTECTED = "is protected and requires human approval to change"  # after the path and a space
# Its config parser, verbatim (after `.memfs.config.json: `).
CONFIG_BAD_JSON = "invalid JSON ({error})"
CONFIG_NOT_OBJECT = "expected a JSON object"
CONFIG_UNKNOWN_FIELD = "unknown field '{key}'"
CONFIG_VERSION = "version must be 1"
CONFIG_MAX_DEPTH = "maxDepth must be a non-negative integer"
CONFIG_POSITIVE = "{key} must be a positive integer"
CONFIG_LIMITS_ARRAY = "fileCharacterLimits must be an array"
CONFIG_LIMIT_OBJECT = "fileCharacterLimits[{index}] must be an object"
CONFIG_LIMIT_UNKNOWN = "fileCharacterLimits[{index}]: unknown field '{key}'"
CONFIG_LIMIT_PATTERN = "fileCharacterLimits[{index}]: pattern must be a non-empty repo-relative glob using '/'"
CONFIG_LIMIT_GLOBSTAR = "fileCharacterLimits[{index}]: '**' must be a complete path segment"
CONFIG_LIMIT_MAX = "fileCharacterLimits[{index}]: maxCharacters must be a positive integer or null"

# ---------------------------------------------------------------- frontmatter (document.parse)
# Readers disagree on which value of a repeated key counts; Letta's refuses the file.
DUPLICATE_KEY = "frontmatter has the key '{key}' more than once; keep one"

# ---------------------------------------------------------------- MemFS v2
# Letta's hook, verbatim.
V2_HEADER = "Memory validation failed:"
INDEX_HAS_FRONTMATTER = "MEMORY.md must not have frontmatter"
V2_UNKNOWN_KEY = "unknown frontmatter key '{key}' (allowed: name description)"
V2_DUPLICATE_KEY = "duplicate frontmatter key '{key}'"
KEY_EMPTY = "'{key}' must not be empty"
KEY_MISSING = "missing required field '{key}'"
MISSING_INDEX = "missing required index {index}"
ROOT_INDEX_REQUIRED = "root memory index is required for MemFS v2"
# Letta's memory tool, verbatim (without its `memory: ` prefix).
V2_NO_SYSTEM = "core memory uses root Markdown files, not system/"
V2_NO_SKILLS = "skills are managed by the skill/file tooling, not the memory tool"
V2_NEEDS_INDEX = "Memory requires {index} before writing {path}"
V2_INDEX_NOT_DELETED = "MEMORY.md indexes cannot be deleted"
V2_INDEX_NOT_RENAMED = "MEMORY.md indexes cannot be renamed"
V2_INDEX_NO_DESCRIPTION = "MEMORY.md has no frontmatter"
TOOL_NO_FRONTMATTER = "{path}: target file is missing required frontmatter"
TOOL_NO_DESCRIPTION = "{path}: target file frontmatter is missing 'description'"
TOOL_NO_NAME = "{path}: target file frontmatter is missing 'name'"
TOOL_V2_KEYS = "{path}: memory frontmatter must contain exactly 'name' and 'description'"
TOOL_V2_EMPTY = "{path}: memory 'name' and 'description' must not be empty"
TOOL_INDEX_FRONTMATTER = "{path}: MEMORY.md must not have frontmatter"
TOOL_EMPTY_FIELD = "'{key}' must not be empty"
INSERT_LINE_NOT_NUMBER = "'insert_line' must be a number"

# memrepo's own, for v2.
INDEXES_TRUNCATED = "[Indexes truncated: showing {shown} of {total} MEMORY.md indexes. {omitted} omitted.]"
INIT_LAYOUT = "unknown memory layout '{layout}'; use one of: {layouts}"

# ---------------------------------------------------------------- paths memory may hold
# paths.path_problem's phrases follow the path: the validator prints "<path> <phrase>", the
# memory tool PATH_REFUSED.
PATH_REFUSED = "path '{path}' {problem}"
AREA_GIT = "git's own data (.git/)"
AREA_MEMREPO = "memrepo's machine state (.memrepo/)"
AREA_CI = "the repository's CI configuration (.github/)"
PATH_RESERVED = "is inside {area}, which is not memory: memrepo refuses every change that writes there"
PATH_GIT_CONFIG = (
    "is git's own configuration ({name}), not memory: such a file can change how git merges, checks out, "
    "ignores or fetches the repository, so memrepo refuses it; a person changes it past memrepo's checks"
)
PATH_HIDDEN_TOP = (
    "is hidden ({name}) at the top of the repository, where git and other tools keep their configuration, "
    "not memory, so memrepo refuses it; keep memory in visible files and folders, such as reference/"
)
PATH_DOT_NAME = "has the name '{name}', which git does not allow in a path"
PATH_CONTROL_CHAR = "contains a control character ({code})"
PATH_INVISIBLE_CHAR = (
    "contains the invisible character {code}, which makes a name look like another (or turns the text "
    "after it around); write the name without it"
)
PATH_WINDOWS_CHAR = "contains '{char}', which Windows does not allow in a file name"
PATH_TRAILING_DOT = (
    "has a name ending in a dot or a space ('{name}'), which Windows drops, so there it names another file"
)
PATH_WINDOWS_DEVICE = "has the name '{name}', which Windows reserves for a device; choose another name"
PATH_SHORT_NAME = (
    "has the name '{name}', which Windows reads as the short name of another file or folder; choose "
    "another name"
)
PATH_NAME_TOO_LONG = (
    "has a name of {size} bytes ('{name}...'), over the {limit} bytes file systems hold in one name; "
    "shorten it"
)
PATH_TOO_LONG = "is longer than {limit} characters"
PATH_IS_LINK = "is a symbolic link; memory holds only regular files (a link can point outside the repository)"
PATH_IS_SUBMODULE = (
    "is a submodule (another repository's commit); memory holds only regular files"
)
PATH_BAD_MODE = "has git file mode {mode}; memory holds only regular files"
PATH_EXECUTABLE = (
    "is marked executable (git file mode 100755); memory holds only regular files (100644): "
    "clear the bit with `git update-index --chmod=-x` on it"
)
PATH_LOOKS_LIKE = (
    "looks like {other}: its letters are Unicode confusables of that name's (UTS #39), so a reader "
    "takes one for the other; use the existing name or another one"
)
PATH_COLLIDES = (
    "differs from {other} only in letter case or Unicode normalisation: on a case-insensitive clone "
    "(macOS, Windows) the two are one file; use the existing name or another one"
)

# ---------------------------------------------------------------- MemGPT's tools
# Archival memory (archival.py): file frontmatter, the v2 folder index and its links.
ARCHIVAL_NAME = "Archival {month}"
ARCHIVAL_DESCRIPTION = ("Archival memory: passages recorded with archival_memory_insert in {month}, one dated, "
                        "attributed entry each")
ARCHIVAL_INDEX = ("# Archival memory\n\nPassages recorded with archival_memory_insert, one file per month; "
                  "search them with archival_memory_search.\n\n")
ARCHIVAL_INDEX_LINK = "- [{name}]({file})"
ARCHIVAL_TOO_LARGE = ("this passage is {size} characters, more than the {limit} an archival file may hold; "
                      "split it into several inserts")
SEARCH_NEEDS_SESSION = ("{command} is answered by an agent session (AgentSession, `memrepo tool` or `memrepo mcp`), "
                        "which also knows the transcripts; the memory tool alone only edits and views files")

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
READ_ONLY_DELETED = "file is read_only and cannot be deleted or moved"
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

# Paths given to the memory tool.
PATH_EMPTY = "path is empty; give a path such as system/human.md"
PATH_NOT_TEXT = "path must be text, found {kind}"
PATH_NUL = "path contains a NUL character"
PATH_ABSOLUTE = "path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"
PATH_HOME = "path '{path}' refers to a home folder; give a path inside the memory repository"
PATH_PARENT = "path '{path}' contains '..'; paths must stay inside the memory repository"
