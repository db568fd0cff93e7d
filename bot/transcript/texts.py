"""What the transcript store says: a row's problems, a damaged log or index, search and the
retrieval its callers ask for, and the imports of Letta Code's and Claude Code's transcripts."""

from __future__ import annotations

from bot.texts import Text

TRANSCRIPT_UNKNOWN_CONVERSATION = "agent {agent} has no conversation {conversation!r}; its conversations: {known}"
IMPORT_UNREADABLE = "cannot read {path}: {reason}"
IMPORT_ROW_BAD = "line {line}: {problem}"

HARNESS_IMPORT_INVALID = Text("{path}: {count:|problem|problems}, so nothing was imported:\n{problems}")
LETTA_PLACES = (
    "name Letta Code's transcripts folder, an agent's folder or a conversation's folder "
    "(default: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts)"
)
IMPORT_WHERE = "{where}: {problem}"  # a folder or a field, and what is wrong with it
IMPORT_ROW_NOT_OBJECT = "a row must be a JSON object, found {kind}"
IMPORT_FIELD_MISSING = "the row has no {field}"
IMPORT_TOOL_NAME_BAD = (
    "tool name {name!a} cannot name a source: tool:<name> takes letters, digits, '.', '_', '/' and '-'"
)



# Search.
SEARCH_NO_WORDS = "the query has no words to search for"
SEARCH_BAD_K = "-k must be a whole number from 1 to {limit}, found {value!r}"
