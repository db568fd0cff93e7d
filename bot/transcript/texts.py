"""What the transcript store says: a row's problems, a damaged log or index, search and the
retrieval its callers ask for, and the imports of Letta Code's and Claude Code's transcripts."""

from __future__ import annotations

from bot.texts import Text

# Rows, the logs and the index; memrepo's own rows imported.
TRANSCRIPT_KIND_BAD = "kind {value!r} is not one of: {kinds}"
TRANSCRIPT_SOURCE_BAD = (
    "source {value!a} is not valid; use one of: {sources} (a tool name is ASCII letters, digits, "
    "'.', '_', '/' or '-'; a URI has no spaces)"
)
TRANSCRIPT_SOURCE_NEEDED = "a {kind} message needs a source: tool:<name>, the tool that produced it"
TRANSCRIPT_TEXT_TYPE = "text must be a string, found {kind}"
TRANSCRIPT_TEXT_EMPTY = "text is empty; a transcript row needs the message's text"
TRANSCRIPT_TEXT_NUL = "text contains a NUL character; transcripts hold text, not binary data"
TRANSCRIPT_TEXT_LONG = "text has {size:,} characters, over the limit of {limit:,} for one transcript row"
TRANSCRIPT_TEXT_SURROGATE = "text is not valid Unicode (a lone surrogate at character {offset})"
TRANSCRIPT_ROW_NOT_OBJECT = "a row must be a JSON object, found {kind}"
TRANSCRIPT_ROW_UNKNOWN = "not a field of a row: {keys} (the fields are {allowed})"
TRANSCRIPT_ROW_MISSING = "required but missing: {keys}"
TRANSCRIPT_TORN = (
    "{log}: an unfinished last line ({size} bytes at offset {offset}) was moved to {torn}; "
    "every earlier row is intact"
)
TRANSCRIPT_LINE_NOT_JSON = "not valid JSON"
TRANSCRIPT_LOG_DAMAGED = (
    "{log}, line {line}: {problem}; the transcript log is damaged there (fix or remove that line, "
    "then run `memrepo transcript rebuild`)"
)
TRANSCRIPT_INDEX_BEHIND = (
    "the row was saved, but indexing it failed ({error}); the index catches up the next time it is opened"
)
TRANSCRIPT_DUPLICATE_ID = "{log}: message {message_id} appears twice; the search index keeps the first"
TRANSCRIPT_WRITE_FAILED = (
    "cannot write to {log}: {reason}; nothing after the last complete row was saved (an unfinished "
    "row is set aside the next time the log is opened)"
)
TRANSCRIPT_INDEX_DAMAGED = "the search index {path} could not be read ({error}); it is built again from the logs"
TRANSCRIPT_INDEX_REBUILT = "the search index of agent {agent} was rebuilt from its logs ({reason})"
TRANSCRIPT_REASON_LOG_GONE = "the log of conversation {conversation} is gone"
TRANSCRIPT_REASON_LOG_SHRANK = "the log of conversation {conversation} is shorter than what was indexed"
TRANSCRIPT_UNKNOWN_AGENT = "no transcripts for agent {agent!r}; known agents: {known}"
TRANSCRIPT_NO_AGENTS = "none yet (add a message with `memrepo transcript append`)"
TRANSCRIPT_UNKNOWN_CONVERSATION = "agent {agent} has no conversation {conversation!r}; its conversations: {known}"
TRANSCRIPT_AFTER_MISSING = (
    "message {after} is not in conversation {conversation} of agent {agent}; give the id of a "
    "message of that conversation (or no `after` to read from the start)"
)
TRANSCRIPT_HOME_NOT_DIR = "{path} is a file; MEMREPO_HOME or --home must be a folder"
IMPORT_UNREADABLE = "cannot read {path}: {reason}"
IMPORT_NOT_JSON = "line {line}: not valid JSON ({error})"
IMPORT_NOT_UTF8 = "line {line}: not valid UTF-8"
IMPORT_ROW_BAD = "line {line}: {problem}"
IMPORT_INVALID = Text("{path}: {count:|invalid row|invalid rows}, so nothing was imported:\n{problems}")
IMPORT_MORE = "  ... and {count} more"

# `memrepo transcript import --from letta` (letta.py, letta_import.py).
LETTA_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Letta conversation|Letta conversations} in "
    "{path}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
LETTA_SKIPPED = "; rows skipped: {rows}"
LETTA_SKIP = {
    "error": Text("{count:|error row|error rows} (Letta Code's own errors)"),
    "empty": Text("{count:|row|rows} without text"),
    "repeated": Text("{count:|repeated row|repeated rows}"),
    "no kind": Text("{count:|row|rows} without a kind"),
    "unknown": Text("{count:|row|rows} of unknown kind {kind!a}"),
}
HARNESS_IMPORT_INVALID = Text("{path}: {count:|problem|problems}, so nothing was imported:\n{problems}")
LETTA_PLACES = (
    "name Letta Code's transcripts folder, an agent's folder or a conversation's folder "
    "(default: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts)"
)
LETTA_NOT_FOUND = "{path} does not exist; " + LETTA_PLACES
LETTA_NOT_DIR = "{path} is a file; " + LETTA_PLACES
LETTA_NONE = (
    "no Letta Code transcripts in {path}: no transcript.jsonl in it, in its folders (one agent's "
    "conversations) or in theirs (every agent's); " + LETTA_PLACES
)
IMPORT_WHERE = "{where}: {problem}"  # a folder or a field, and what is wrong with it
LETTA_ID_TOO_LONG = "Letta's {field} {value!a} is longer than the {limit} characters memrepo keeps"
LETTA_ID_TAKEN = "message id {message_id} is already an earlier message's in this conversation"
IMPORT_ROW_NOT_OBJECT = "a row must be a JSON object, found {kind}"
IMPORT_FIELD_MISSING = "the row has no {field}"
IMPORT_FIELD_NOT_TEXT = "{field} must be text, found {kind}"
IMPORT_TOOL_NAME_BAD = (
    "tool name {name!a} cannot name a source: tool:<name> takes letters, digits, '.', '_', '/' and '-'"
)
IMPORT_ROW_LONG = "the line is {size} bytes long, more than the {limit} memrepo reads of a line"
IMPORT_ROW_NOT_UTF8 = "not valid UTF-8"
IMPORT_ROW_NOT_JSON = "not valid JSON ({error})"
LETTA_REWRITTEN = (
    "{transcript} changed since the last import ({how}): it was read again from the start, and only "
    "messages memrepo did not have were imported"
)
LETTA_SHRANK = "it is shorter than the {size} bytes imported before"
LETTA_CHANGED = "its first {size} bytes are not the ones imported before"
LETTA_UNFINISHED = "{transcript} ends with an unfinished line ({size} bytes); it is imported once Letta Code ends it"

# `memrepo transcript import --from claude-code` (claude_code.py, claude_code_import.py).
CLAUDE_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Claude Code session|Claude Code sessions} in "
    "{path} for agent {agent}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
CLAUDE_SKIPPED = Text("; {count:|row|rows} of Claude Code's own skipped")
CLAUDE_CONTENT_BAD = "message.content must be text or a list of blocks, found {kind}"
CLAUDE_PLACES = (
    "name a Claude Code session (<session-id>.jsonl), a project's folder of sessions or the projects folder "
    "(default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)"
)
CLAUDE_NOT_FOUND = "{path} does not exist; " + CLAUDE_PLACES
CLAUDE_NONE = "no Claude Code sessions in {path}; " + CLAUDE_PLACES
CLAUDE_SESSION_NAME = "{path}: a session's file is named <session-id>.jsonl, and {problem}"
CLAUDE_REWRITTEN = (
    "{transcript} changed since the last import: it was read again from the start, and only messages memrepo "
    "did not have were imported"
)

# `memrepo transcript import --from codex` (codex.py, codex_import.py).
CODEX_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Codex session|Codex sessions} in "
    "{path} for agent {agent}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
CODEX_SKIPPED = Text("; {count:|row|rows} of Codex's own skipped")
CODEX_CONTENT_BAD = "payload.content must be a list of content items, found {kind}"
CODEX_PLACES = (
    "name a Codex rollout (rollout-<time>-<session-id>.jsonl), a day's folder or the sessions folder "
    "(default: $CODEX_HOME/sessions, else ~/.codex/sessions)"
)
CODEX_NOT_FOUND = "{path} does not exist; " + CODEX_PLACES
CODEX_NONE = "no Codex rollouts in {path}; " + CODEX_PLACES
CODEX_ROLLOUT_NAME = "{path}: a Codex rollout is named rollout-<time>-<session-id>.jsonl, and {problem}"
CODEX_NOT_A_ROLLOUT = "this name is not one"
CODEX_REWRITTEN = (
    "{transcript} changed since the last import: it was read again from the start, and only messages memrepo "
    "did not have were imported"
)

# Search.
SEARCH_NO_WORDS = "the query has no words to search for"
SEARCH_BAD_K = "-k must be a whole number from 1 to {limit}, found {value!r}"
SEARCH_BAD_SOURCE = (
    "source filter {value!r} is not valid; use user, agent, human, tool, external, "
    "tool:<name> or external:<uri>"
)
SEARCH_UNKNOWN_CONVERSATION = "no conversation {conversation!r} in the transcripts of {agents}"

# Search in context (retrieval.py).
CONTEXT_BAD_NEIGHBOURS = "neighbours must be a whole number from 0 to {limit}, found {value!r}"
CONTEXT_BAD_WEIGHT = "weight must be a number from 0 to {limit:g}, found {value!r}"
CONTEXT_BAD_DATE_WEIGHT = "date_weight must be a number from 0 to {limit:g}, found {value!r}"
