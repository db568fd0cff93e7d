"""What the markdown-aware merge says of a file it could not merge alone; shown after "path: "."""

from __future__ import annotations

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
