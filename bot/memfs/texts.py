"""What the memory core says: a file's problems under the format rules, the memory tool's
refusals and results (apply_patch's too), and what opening, creating, cloning, compiling,
syncing, merging and reading the history of a memory repository report.

Where Letta Code prints a message it is kept word for word, so a repository one tool writes
reads the same in the other; the newer format rules' sentences are in format_messages.py."""

from __future__ import annotations

from bot.texts import Text

VALIDATION_HEADER = "Frontmatter validation failed:"

# The front door (__init__.py) asked for a name it does not export, in Python's own words.
NO_ATTRIBUTE = "module {module!r} has no attribute {name!r}"

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
BAD_CONFIG = ".memrepo/config.yml: {problem}"

# Paths given to the memory tool.
PATH_EMPTY = "path is empty; give a path such as system/human.md"
PATH_PROBLEM = "{path}: {problem}"
PATH_NOT_TEXT = "path must be text, found {kind}"
PATH_NUL = "path contains a NUL character"
PATH_ABSOLUTE = "path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"
PATH_HOME = "path '{path}' refers to a home folder; give a path inside the memory repository"
PATH_PARENT = "path '{path}' contains '..'; paths must stay inside the memory repository"
PATH_SYMLINK = "path '{path}' goes through a symbolic link that points outside the memory repository"

# Opening a repository.
REPO_MISSING = "no memory repository at {path}: the folder does not exist (create one with `memrepo init {path}`)"
REPO_NOT_DIR = "{path} is a file, not a memory repository folder"
REPO_NOT_GIT = "{path} is not a git repository (create a memory repository with `memrepo init`)"
GIT_COMMAND_FAILED = "git {command} failed in {path}: {problem}"
GIT_NO_OBJECT = "git has no object {oid} in {path}"
REPO_BARE = "{path} is a bare git repository; give the path of a memory repository's working clone"
REPO_NO_COMMITS = "{path} has no commits yet; `memrepo init` makes the first one"
REPO_NOT_MEMORY = (
    "{path} is a git repository but not a memory repository (it has no system/, root MEMORY.md or "
    ".memrepo/, and Letta Code did not make it); run `memrepo init` in an empty folder"
)
REPO_LOCKED = "another memrepo writer has held {path} for too long; try again in a moment"
HEAD_MOVED = "the repository's HEAD moved while this change was being made; nothing was changed, try again"

# The memory tool.
CALL_NOT_JSON = "the tool call is not valid JSON ({error}); send an object such as {{\"command\": \"view\"}}"
CALL_NOT_OBJECT = "the tool call must be a JSON object with a 'command', found {kind}"
CALL_NO_COMMAND = "the tool call has no 'command'; use one of: {commands}"
CALL_UNKNOWN_COMMAND = "unknown memory command '{command}'; use one of: {commands}"
CALL_UNKNOWN_PARAM = "'{command}' does not take the parameter '{param}' (it takes: {accepted})"
CALL_DUPLICATE_PARAM = "'{command}' got two different values for '{param}'; send it once"
CALL_MISSING_PARAM = "'{command}' needs the parameter '{param}'"
CALL_WRONG_TYPE = "'{param}' must be {expected}, found {kind}"
# What CALL_WRONG_TYPE says a parameter must be.
EXPECTED_TEXT = "text"
EXPECTED_COMMIT = "a commit id"
EXPECTED_WHOLE_NUMBER = "a whole number"
EXPECTED_LIST_OF_TEXT = "a list of text"
CALL_BINARY = "'{param}' contains a NUL byte; memory holds text, not binary data"
CALL_NOT_UNICODE = ("'{param}' is not valid Unicode: character {index} is {code}, a lone surrogate with no "
                    "UTF-8 form; send the text as UTF-8")
CALL_OUT_OF_RANGE = "'{param}' must be from {low} to {high}, found {value}"
CALL_EMPTY_TEXT = "'{param}' must not be empty"
CALL_TOO_SMALL = "'{param}' must be {low} or more, found {value}"
CALL_BAD_RANGE = "'view_range' must be two whole numbers [first line, last line] (last may be -1 for the end)"
NO_AGENT_ID = (
    "no agent id: pass --agent-id (or agent_id=) or set one with "
    "`memrepo init --agent-id ID` / `git config memrepo.agentId ID` (a memory Letta Code made names it in "
    "letta.agentId)"
)
VIEW_RANGE = "view_range [{start}, {end}] is outside the file's {count} lines"
VIEW_LISTING_HEADER = "Memory files under {folder} at revision {revision}:"
NOT_FOUND = "{path} does not exist; `view` lists the memory files"
IS_FOLDER = "{path} is a folder, not a file"
EMPTY_DESCRIPTION_ARG = "'description' must not be empty: say in a few words what the file holds"
CREATE_BOTH_DESCRIPTIONS = (
    "give either 'description' or a file_text that starts with its own frontmatter, not both"
)
CREATE_EXISTS = (
    "{path} already exists (its current content is attached); edit it with str_replace or insert, "
    "or pass expected_revision to replace it whole"
)
UNTRACKED_IN_WAY = (
    "{path} exists in the working tree but was never committed; commit or remove it before "
    "creating it through the memory tool"
)
REPLACE_EMPTY = "old_str is empty; give the exact text to replace in {path}"
REPLACE_NONE = (
    "old_str was not found in {path} (0 matches); view the file and copy the exact text, "
    "whitespace included"
)
REPLACE_MANY = (
    "old_str matches {count} places in {path}; include more surrounding text so that it "
    "matches exactly one"
)
INSERT_RANGE = (
    "insert_line {line} is outside {path}, which has {count} lines; use 0 for the top, "
    "N to insert after line N, or -1 for the end"
)
DESCRIPTION_UNPARSABLE = "cannot update the description of {path}: {problem}"
RENAME_SAME = "{path} would be renamed to itself; nothing to do"
RENAME_INTO_ITSELF = "cannot move {old} into itself ({new})"
RENAME_EXISTS = "{path} already exists; choose another name or delete it first"
NO_CHANGE = "no change: {paths} already reads as requested, so nothing was committed"
DIRTY = (
    "the memory repository has uncommitted changes ({paths}); commit or discard them "
    "(git -C {root} status) before editing through the memory tool"
)
UNKNOWN_REVISION = "expected_revision {revision} is not a commit of this memory repository"
REVISION_CONFLICT = (
    "{path} changed since revision {seen} (memory is now at {head}) and {state}; redo the "
    "edit against the current version and pass expected_revision {head}"
)
REVISION_CONFLICT_ATTACHED = "its current content is attached"  # the {state} of REVISION_CONFLICT
REVISION_CONFLICT_GONE = "it no longer exists"
PATH_SYMLINK_INSIDE = (
    "path '{path}' goes through a symbolic link; the memory tool writes only regular files"
)
READ_ONLY_REFUSED = (
    "{path}: " + READ_ONLY_FILE + ". A person owns it: propose the change to them instead."
)
FIX_AND_RETRY = "Nothing was written. Fix the problems above and call the tool again."
COMMITTED = "Committed {sha} \"{message}\"; {note}"
PUSHED = "pushed to origin/main."
NO_REMOTE_NOTE = "saved in the local memory repository (no remote is connected)."
NOT_PUSHED = "saved locally but NOT pushed yet ({reason}); the next sync will push it."
NOT_PUSHED_DISABLED = "saved locally; pushing is turned off for this session."
DEFAULT_REASON = {
    "create": "Create {path}",
    "str_replace": "Edit {path}",
    "insert": "Add to {path}",
    "delete": "Delete {path}",
    "rename": "Rename {old} to {new}",
    "update_description": "Update the description of {path}",
    "apply_patch": "Patch {path}",
    "core_memory_append": "Append to {path}",
    "core_memory_replace": "Edit {path}",
    "archival_memory_insert": "Archive a passage in {path}",
}

# apply_patch.
PATCH_EMPTY = "the patch is empty; it must start with '*** Begin Patch' and end with '*** End Patch'"
PATCH_EXPECTED = "line {line}: expected {expected}, found {found}"
PATCH_END_OF_TEXT = "the end of the patch"
PATCH_EXPECT_BEGIN = "'*** Begin Patch'"
PATCH_EXPECT_SECTION = "'*** Add File:', '*** Update File:', '*** Delete File:' or '*** End Patch'"
PATCH_EXPECT_ADD_LINE = "a line starting with '+' (the text of the new file {path})"
PATCH_EXPECT_HUNK_LINE = (
    "a hunk line (' ' context, '-' removed, '+' added), an '@@' line or a '***' line"
)
PATCH_EXPECT_AFTER_DELETE = "the next '***' line ('*** Delete File:' takes no lines)"
PATCH_EXPECT_NOTHING = "nothing after '*** End Patch'"
PATCH_NO_PATH = "line {line}: '{marker}' needs a file path after the colon"
PATCH_NO_FILES = (
    "the patch changes no files; add '*** Add File:', '*** Update File:' or '*** Delete File:' sections"
)
PATCH_NO_HUNKS = (
    "line {line}: '*** Update File: {path}' changes nothing; add a hunk ('@@', then ' context', "
    "'-removed' and '+added' lines) or a '*** Move to:' line"
)
PATCH_MOVE_MISPLACED = "line {line}: '*** Move to:' must come right after an '*** Update File:' line"
PATCH_EOF_MISPLACED = "line {line}: '*** End of File' must end a hunk of an '*** Update File:' section"
PATCH_HUNK_EMPTY = (
    "line {line}: this hunk has no lines; give ' context', '-removed' and '+added' lines after '@@'"
)
PATCH_HUNK_NO_CHANGE = "line {line}: this hunk changes nothing (it has no '-' or '+' lines)"
PATCH_SAME_PATH = (
    "line {line}: {path} is already changed by the section at line {first}; "
    "put all changes to one file in one section"
)
PATCH_TWICE = "{path}: the patch changes this file twice; put all changes to one file in one section"
PATCH_ADD_EXISTS = (
    "{path}: cannot add the file, it already exists; use '*** Update File: {path}' to change it"
)
PATCH_UPDATE_MISSING = (
    "{path}: cannot update the file, it does not exist; use '*** Add File: {path}' to create it"
)
PATCH_DELETE_MISSING = "{path}: cannot delete the file, it does not exist"
PATCH_MOVE_EXISTS = "{path}: cannot move the file to {move_to}, which already exists"
PATCH_HEADER_MISSING = (
    "{path}: hunk {hunk} (patch line {line}) names '@@ {header}', but no line{where} contains that text"
)
PATCH_NO_MATCH = (
    "{path}: hunk {hunk} (patch line {line}) does not match the file{where}; it looked for:\n{lines}"
)
PATCH_AMBIGUOUS = (
    "{path}: hunk {hunk} (patch line {line}) matches {count} places in the file{where}; add context "
    "lines, or an '@@' line with the heading above the change. It looked for:\n{lines}"
)
PATCH_NOT_AT_END = (
    "{path}: hunk {hunk} (patch line {line}) is marked '*** End of File' but does not match the end "
    "of the file; it looked for:\n{lines}"
)
PATCH_WHERE_HEADER = " after the line containing '{header}'"
PATCH_WHERE_HUNK = " after hunk {hunk}"
PATCH_LOOKED_LINE = "    |{text}"
PATCH_LOOKED_MORE = "    ... and {count} more lines"

# Making a memory repository (create.py).
INIT_NOT_DIR = "{path} is a file; give a new or empty folder for the memory repository"
INIT_NOT_EMPTY = (
    "{path} is {what}; memrepo init only creates a memory repository in a new or empty folder "
    "(to connect an existing memory repository to a remote, use `memrepo repository set URL`)"
)
FOLDER_IS_GIT = "a git repository"  # {what} of INIT_NOT_EMPTY and CLONE_NOT_EMPTY
FOLDER_CANNOT_MAKE = "cannot make the folder {path}: {reason}; nothing was made: choose another folder"
FOLDER_NOT_EMPTY = "not empty"
INIT_COMMIT = "Create memory repository"

# Cloning one (clone.py).
CLONE_NO_NAME = "cannot tell a folder name from {url}; give one: `memrepo clone URL DIR`"
CLONE_NOT_DIR = "{path} is a file; give a new or empty folder for the clone"
CLONE_NOT_EMPTY = "{path} is {what}; memrepo clone only clones into a new or empty folder, so nothing was changed"
CLONE_UNREACHABLE = "cannot reach {url} ({problem}); nothing was cloned"
CLONE_EMPTY = (
    "{url} has no commits, so it holds no memory yet; nothing was cloned (make one and push it there with "
    "`memrepo init DIR --remote URL`)"
)
CLONE_NO_MAIN = "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was cloned"
CLONE_NOT_MEMORY = (
    "{url} is a git repository but not a memory repository (its main has no system/, root MEMORY.md or "
    ".memrepo/); nothing was cloned"
)

# Validating one.
VALIDATE_NO_SUCH_PATH = "{path} does not exist in the working tree or at HEAD"
VALIDATE_NO_BASE = "{base} is not a commit or branch of this repository (fetch it first?)"

# Prompt compile.
COMPILE_UNREADABLE = "[this file cannot be shown in the prompt: {problem}]"
TREE_TRUNCATED = "[Tree truncated: showing {shown} of {total} entries. {omitted} omitted.]"

# Sync and remotes.
SYNC_NO_REMOTE = "no remote"
SYNC_NOT_CONFIGURED = (
    "{path} is not connected to a remote; connect one with `memrepo repository set <url>`"
)
SYNC_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before syncing"
)
SYNC_DIRTY_QUEUED = (
    "the remote's main moved, and replaying onto it would touch a working tree with "
    "uncommitted changes ({paths})"
)
SYNC_UNREACHABLE = "remote unreachable: {problem}"
SYNC_REFUSED = "the remote refused the push: {problem}"
SYNC_BUSY = "the remote's main kept moving ({attempts} attempts)"
SYNC_NOT_ON_MAIN = "the clone has {branch} checked out, not main; memrepo syncs main only"
SYNC_SET_ASIDE = (
    "Commit {sha} \"{message}\" was NOT saved to main: it could not be replayed onto the remote's main "
    "({reason}). It is kept at {ref}; apply it with `git cherry-pick {sha}` once resolved, or redo the edit, "
    "then delete the ref (`git update-ref -d {ref}`)."
)
SYNC_SET_ASIDE_NO_REASON = "no reason was recorded"
SYNC_CONFLICT_LINES = "{path} was changed differently on both sides ({where})"
SYNC_CONFLICT_DELETED = "{path} was deleted on one side and changed on the other"
SYNC_CONFLICT_ADDED = "{path} was added on both sides with different content"
SYNC_CONFLICT_NOT_TEXT = "{path} was changed on both sides and is not UTF-8 text, so it cannot be merged"
SYNC_CONFLICT_INVALID = "{path} does not validate once merged ({problem})"
SYNC_FAILED = "not synced ({reason}); local commits stay local and the next push or sync sends them"
SYNC_UP_TO_DATE = "in sync with {url} at {sha}"
SYNC_PUSHED = Text("pushed {count:|commit|commits} to {url}; main is at {sha}")
SYNC_PUSHED_REPLAYED = Text(
    "replayed {replayed:|local commit|local commits} onto the remote's newer main and pushed them to {url}; "
    "main is at {sha}"
)
SYNC_FAST_FORWARDED = Text("fast-forwarded main by {count:|commit|commits} from {url}; main is at {sha}")
REMOTE_URL_EMPTY = (
    "the remote URL is empty; give a git URL such as https://github.com/owner/memory.git or a path"
)
REMOTE_URL_BAD_CHARS = "the remote URL '{url}' contains whitespace or control characters"
REMOTE_URL_OPTION = "the remote URL '{url}' starts with '-'; give a git URL or a path"
REMOTE_SET_UNREACHABLE = "cannot reach {url} ({problem}); nothing was changed"
REMOTE_SET_NO_MAIN = (
    "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was changed"
)
REMOTE_SET_UNRELATED = Text(
    "{url} and {path} have no commit in common ({count:|local commit|local commits}; the remote's main is at "
    "{remote}, local main at {local}), so neither can be replayed onto the other; nothing was changed. Connect "
    "an empty repository, or clone the remote and redo the local edits there"
)
REMOTE_SET_JOINED = Text(
    "connected to {url}: replayed {replayed:|local commit|local commits} onto the remote's main (which had "
    "{pulled:|commit|commits} this folder lacked) and pushed; main is at {sha}"
)
REMOTE_SET_JOINED_NOT_PUSHED = (
    "connected to {url} and replayed the local commits onto the remote's main, but could not push them "
    "({reason}); `memrepo repository sync --repo {path}` sends them"
)
REMOTE_SET_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before taking the "
    "remote's history"
)
REMOTE_SET_PUSH_FAILED = "connected to {url} but could not push main ({reason}); nothing was changed"
REMOTE_SET_PUSHED = Text("connected to {url}: pushed main ({count:|commit|commits}) to the empty remote")
REMOTE_SET_ADOPTED = (
    "connected to {url}: took the remote's main ({sha}); the local initial commit is kept at {backup}"
)
REMOTE_SET_FAST_FORWARDED = Text("connected to {url}: fast-forwarded main by {count:|commit|commits} to {sha}")
REMOTE_SET_AHEAD = Text("connected to {url}: pushed {count:|local commit|local commits}; main is at {sha}")
REMOTE_SET_IN_SYNC = "connected to {url}: already in sync at {sha}"
REMOTE_UNSET = "disconnected from {url}"
REMOTE_UNSET_UNPUSHED = Text(
    "disconnected from {url}; the local history keeps its {count:|unpushed commit|unpushed commits}"
)
REMOTE_UNSET_NONE = "no remote was connected; nothing to do"
STATUS_REMOTE = "remote"
STATUS_HEAD = "head"
STATUS_AHEAD = "ahead"
STATUS_BEHIND = "behind"
STATUS_LAST_SYNC = "last sync"
STATUS_BACKUPS = "backups"
STATUS_SET_ASIDE = "Set aside"
STATUS_SET_ASIDE_VALUE = "{sha} \"{message}\" at {ref}: {reason}"
STATUS_NO_REMOTE = "none (connect one with `memrepo repository set <url>`)"
STATUS_NEVER = "never"
STATUS_NONE = "none"
STATUS_AHEAD_VALUE = Text("{count:|commit|commits} not pushed")
STATUS_BEHIND_VALUE = Text("{count:|commit|commits} not pulled (as of {when})")
STATUS_LAST_FETCH = "the last fetch"
STATUS_JUST_NOW = "this fetch"
STATUS_UNKNOWN = "unknown (never fetched)"
STATUS_FETCH_FAILED = "fetch failed: {problem}"

# The markdown-aware merge (resolve.py), for sync and the integrator; shown after "path: ".
RESOLVE_ABSENT = "absent"
RESOLVE_KEY_CONFLICT = (
    "frontmatter '{key}' changed on both sides: {ours} in the pull request, {theirs} on the base (was {base})"
)
RESOLVE_TEXT_CONFLICT = "both sides changed {where}"
RESOLVE_WHERE_LINES = "lines {first}-{last}"
RESOLVE_WHERE_LINE = "line {line}"
RESOLVE_WHERE_BEFORE = "the place before line {line}"
RESOLVE_BOTH_ADDED = "added on both sides with different content"
RESOLVE_DELETED_OURS = "deleted in the pull request, changed on the base"
RESOLVE_DELETED_THEIRS = "changed in the pull request, deleted on the base"
RESOLVE_NOTE_DESCRIPTION = "'description' changed on both sides: kept the pull request's {ours} (the base had {theirs})"
RESOLVE_NOTE_READ_ONLY = "'read_only' kept as it was ({value}): a merge never changes it"
RESOLVE_NOTE_FAILED = "the {name} resolver could not help: {problem}"
RESOLVE_NOTE_REJECTED = "the {name} resolver's answer was not used: {problem}"
RESOLVE_ANSWER_EMPTY = "the answer is empty"
RESOLVE_ANSWER_TOO_LONG = "the answer has {size:,} characters, more than the {limit:,} a merge of these files can need"
RESOLVE_ANSWER_MARKERS = "the answer still has conflict markers"
RESOLVE_ANSWER_NOT_DOCUMENT = "the answer is not a memory document (frontmatter between --- lines, then the body)"
RESOLVE_ANSWER_KEY = "the answer changes frontmatter '{key}', which the merge rules settle"
RESOLVE_ANSWER_INVALID = "the answer does not validate: {problem}"

# Memory at a date, and who wrote a line (history.py, blame.py).
HISTORY_BEFORE_FIRST = "memory did not exist yet at {when}: the first commit on {ref} is from {first}"
HISTORY_BAD_PATH = "{path!r} is not a path inside memory (no '..', no absolute paths, nothing under .git)"
HISTORY_NOT_IN_MEMORY = "{path} is not a file in memory {where}{hint}"
HISTORY_IS_FOLDER = " (it is a folder: `memrepo at DATE` lists files)"
HISTORY_WHERE_AT = "at {when} (commit {sha})"
HISTORY_BLAME_FAILED = "cannot tell who wrote the lines of {path}: git blame failed ({problem})"
