"""What the memory tool says: a path it was given, its refusals and results, and apply_patch's."""

from __future__ import annotations

from bot.memfs.format.texts import READ_ONLY_FILE

# Paths given to the memory tool.
PATH_PROBLEM = "{path}: {problem}"
PATH_SYMLINK = "path '{path}' goes through a symbolic link that points outside the memory repository"

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
