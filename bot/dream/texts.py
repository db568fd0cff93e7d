"""What a dream says: to whoever asked for it (opened, nothing new, already open, failed), in
its pull request and in the memory files its verbatim strategy writes, and what its llm and
anthropic strategies report; the sentences the anthropic dreamer itself reads (its task, its
search tool) are here too. Its system prompts are templates (templates/prompts/)."""

from __future__ import annotations

from bot.texts import Text

# One dream, as the runner reports it.
DREAM_NO_AGENT = "which agent? give --agent, or set memrepo.agentId in the repository (memrepo init does)"
DREAM_BAD_TRIGGER = "dream trigger {trigger!r} is not one of step-count, compaction, manual"
DREAM_WHICH_CONVERSATION = ("agent {agent} has several conversations; name one with --conversation, or dream "
                            "each that has something new with --all: {known}")
DREAM_UNKNOWN_STRATEGY = "unknown dream strategy {name!r}; known strategies: {known}"
DREAM_CURSOR_BAD = "the dream cursor {path} is not valid: {problem}"
DREAM_CURSOR_MISSING = (
    "the dream cursor {path} at {base} says conversation {conversation} of agent {agent} was consumed through "
    "message {message}, but the transcript has no such message; nothing was done (fix or remove the cursor in a "
    "reviewed commit, or restore the transcript)"
)
# What is wrong with a cursor file (the {problem} of DREAM_CURSOR_BAD).
DREAM_CURSOR_TIME_NOT_TEXT = "{key} must be an ISO 8601 time, found {found}"
DREAM_CURSOR_TIME_BAD = "{key} {value!r} is not an ISO 8601 time"
DREAM_CURSOR_DREAM_ID_BAD = "dream_id {dream_id!r} is not a dream id"
DREAM_CURSOR_NOT_JSON = "not JSON ({error})"
DREAM_CURSOR_NOT_OBJECT = "expected a JSON object, found {found}"
DREAM_CURSOR_UNKNOWN_KEYS = "unknown {key} {keys}"  # {key}: key or keys
DREAM_CURSOR_MISSING_KEYS = "missing {key} {keys}"
DREAM_CURSOR_MESSAGE_ID = "through_message_id: {problem}"

# Programming errors of the trigger rules (triggers.py): an event or outcome no caller sends.
DREAM_UNKNOWN_EVENT = "unknown dream event {event!r}; expected one of {known}"
DREAM_UNKNOWN_OUTCOME = "unknown dream outcome {outcome!r}"

DREAM_STATE_BAD = "the dream trigger state {path} is damaged ({problem}); remove it to start counting again"
DREAM_NOTHING_NEW = "nothing to dream for agent {agent}, conversation {conversation}: no messages after {cursor}"
DREAM_NOTHING_TO_CHANGE = Text(
    "the {strategy} dream found nothing to change in {count:|message|messages} of conversation {conversation} "
    "({summary}); no pull request was opened and the cursor stays where it was"
)
DREAM_ALREADY_OPEN = (
    "dream {dream} for conversation {conversation} is still open as pull request #{number} ({url}, "
    "messages {range}); no other dream is opened until it is merged or closed."
)
DREAM_DUPLICATE = (
    "pull request #{number} ({url}, dream {dream}) already covers the same messages {range} of conversation "
    "{conversation}; not opening another."
)
DREAM_REMEMBERED = "The {trigger} trigger is remembered and fires when it is merged or closed."
DREAM_RUNNING = "a dream for conversation {conversation} is running now; this trigger is folded into it"
DREAM_OPENED = Text(
    "dream {dream} opened pull request #{number} ({url}): {changes:|change|changes} from "
    "{count:|message|messages} {range}"
)
DREAM_SHARED_OPENED = " Team knowledge for shared memory {name}: pull request #{number} ({url}) on its repository."
DREAM_SHARED_KEPT = " Shared memory {name}: {said}"
DREAM_SHARED_READ_ONLY = ("the dream addresses shared/{name}/, which is not attached to this memory or is attached "
                          "read-only; propose it on the shared memory's repository itself")
DREAM_SHARED_NOT_PROJECTED = ("the dream addresses shared/{name}/, which has no projection here yet: run memrepo "
                              "shared sync --repo {memory}")
DREAM_SHARED_CALL_REFUSED = "the memory tool refused call {number} of {total} ({command}) on shared/{name}/: {problem}"
DREAM_SHARED_INVALID = "the dream's change to shared memory {name} is not valid: {problems}"
DREAM_FAILED = "dream {dream} failed, nothing was opened and the cursor is unchanged: {problem}"
DREAM_CALL_REFUSED = "the memory tool refused call {number} of {total} ({command}): {problem}"
DREAM_INVALID = "the dream's change is not valid: {problems}"
DREAM_BRANCH_LEFT = "{error} (and the branch {branch} could not be deleted from origin: {problem})"
DREAM_PR_TITLE = Text("Dream for {agent}/{conversation}: {changes:|change|changes} from {count:|message|messages}")
DREAM_OPENED_UNTRUSTED = (
    "; it read content from outside the conversation ({sources}), so a person must approve it "
    "(the integrator labels it memrepo:untrusted)"
)

# The verbatim strategy: the records it writes into memory, and its pull request's words.
DREAM_VERBATIM_DESCRIPTION = (
    "What the user said in conversation {conversation} during {month}, verbatim, each with the time it was "
    "captured (UTC) and its message id"
)
DREAM_VERBATIM_TITLE = "What the user said in conversation {conversation}, {month}"
DREAM_VERBATIM_PART = " (part {part})"
DREAM_VERBATIM_NAME = "What the user said, {month}"
DREAM_VERBATIM_INDEX_TOP = ("# Conversations\n\nWhat the user said, word for word, one folder per conversation; "
                            "each folder's MEMORY.md lists its months.\n\n")
DREAM_VERBATIM_INDEX = "# Conversation {conversation}\n\nWhat the user said in it, word for word, by month:\n\n"
DREAM_VERBATIM_INDEX_LINK = "- [{name}]({file})\n"
DREAM_VERBATIM_INDEX_CREATE = "Index {path}: the folder a v2 memory needs before the records it lists"
DREAM_VERBATIM_INDEX_LINKED = "Link what is new from {path}"
DREAM_VERBATIM_TOO_SMALL = (
    "limits.file_chars ({limit}) leaves no room for a record in a new file; raise it in .memrepo/config.yml"
)
DREAM_VERBATIM_NOTHING = Text("no new statements by the user in {count:|message|messages}")
DREAM_VERBATIM_CREATE = Text(
    "Record {count:|statement|statements} by the user, verbatim with their dates, in a new {path}"
)
DREAM_VERBATIM_APPEND = Text(
    "Record {count:|more statement|more statements} by the user, verbatim with their dates, in {path}"
)
DREAM_VERBATIM_SUMMARY = Text(
    "Recorded {count:|statement|statements} the user made in conversation {conversation} (of "
    "{window:|new message|new messages}), "
    "from {first:when} to {last:when}, word for word with the time each was captured and its message id, in {paths}. "
    "Earlier records are kept as they were: a statement that changes an earlier one stands beside it with its "
    "own date."
)

# The llm strategy (an OpenAI-compatible endpoint).
DREAM_LLM_NOT_CONFIGURED = (
    "the llm strategy needs MEMREPO_LLM_URL (an OpenAI-compatible endpoint such as http://host/v1) and "
    "MEMREPO_LLM_MODEL"
)
DREAM_LLM_BAD_TIMEOUT = "MEMREPO_LLM_TIMEOUT must be a positive number of seconds, found {value!r}"
DREAM_LLM_TIMEOUT = "the LLM endpoint {url} did not answer within {seconds:g}s"
DREAM_LLM_UNREACHABLE = "the LLM endpoint {url} cannot be reached ({problem})"
DREAM_LLM_STATUS = "the LLM endpoint {url} answered HTTP {status}: {answer}"
DREAM_LLM_INVALID = "the LLM's answer is not valid memory tool calls: {problem}"
# What the LLM reads in its request, in place of a file or the end of a message too long to show.
DREAM_LLM_OMITTED = "{chars} characters not shown"
DREAM_LLM_CUT = " [... {more} more characters]"
# What is wrong with the LLM's answer (the {problem} of DREAM_LLM_INVALID).
DREAM_LLM_EMPTY = "the answer is empty"
DREAM_LLM_NOT_OBJECT = "expected a JSON object with summary and calls, found {found}"
DREAM_LLM_UNKNOWN_KEYS = "unknown {keys} {names} (expected summary and calls)"
DREAM_LLM_NO_SUMMARY = "summary must be non-empty text"
DREAM_LLM_CALLS_NOT_LIST = "calls must be a list, found {found}"
DREAM_LLM_TOO_MANY_CALLS = "{count} calls, more than the {limit} one dream may make"
DREAM_LLM_CALL = "call {number}"
DREAM_LLM_CALL_NOT_OBJECT = "{where} must be an object, found {found}"
DREAM_LLM_CALL_NO_IDS = "{where}: message_ids must be a non-empty list of transcript message ids"
DREAM_LLM_CALL_UNKNOWN_ID = "{where}: message id {message_id!r} is not in the transcript since the cursor"
DREAM_LLM_CALL_NOT_EDIT = "{where}: {command} is not an edit; propose edits only"
DREAM_LLM_CALL_NO_REASON = "{where}: reason (why the change is made) is missing"

# The anthropic strategy (strategies/anthropic.py): its errors, and what the dreamer reads.
DREAM_ANTHROPIC_NOT_CONFIGURED = (
    "the anthropic strategy needs MEMREPO_ANTHROPIC_MODEL (a Claude model, such as claude-sonnet-5-5) and an "
    "API key in ANTHROPIC_API_KEY (or MEMREPO_ANTHROPIC_API_KEY)"
)
DREAM_ANTHROPIC_NO_MODULE = "no module named {name!r}"  # the SDK is an optional extra
DREAM_ANTHROPIC_BAD_COUNT = "{name} must be a positive whole number, found {value!r}"
DREAM_ANTHROPIC_BAD_TIMEOUT = "MEMREPO_ANTHROPIC_TIMEOUT must be a positive number of seconds, found {value!r}"
DREAM_ANTHROPIC_TURNS = (
    "the dreamer ({model}) was still working after {turns} turns, its bound (MEMREPO_ANTHROPIC_MAX_TURNS); "
    "none of its edits is kept"
)
DREAM_ANTHROPIC_TOKENS = (
    "the dreamer ({model}) used {used:,} tokens, more than its bound of {limit:,} (MEMREPO_ANTHROPIC_MAX_TOKENS); "
    "none of its edits is kept"
)
DREAM_ANTHROPIC_STOPPED = (
    "the dreamer's reply ({model}) ended with stop reason {reason!r} before it had finished; none of its edits "
    "is kept"
)
DREAM_ANTHROPIC_TIMEOUT = "the Anthropic API did not answer within {seconds:g}s"
DREAM_ANTHROPIC_UNREACHABLE = "the Anthropic API cannot be reached ({problem})"
DREAM_ANTHROPIC_STATUS = "the Anthropic API answered HTTP {status}: {answer}"
DREAM_ANTHROPIC_NO_SUMMARY = "The dreamer gave no summary of its edits."
DREAM_ANTHROPIC_NEEDS_IDS = (
    "This edit was not made: before each edit, say in your reply's text why you make it and which transcript "
    "messages it rests on, by their ids ({example}); then call the memory tool again."
)
DREAM_ANTHROPIC_KEPT = (
    "It goes into the dream's pull request (edit {number}), which is reviewed before it reaches the agent's memory."
)
DREAM_ANTHROPIC_SEARCH_DESCRIPTION = (
    "Search the conversation's transcript since the last dream (BM25 over words and their stems, in English, "
    "Korean, Japanese and Chinese; \"quoted words\" match as a phrase). Returns the best messages, each with its "
    "id, when it was captured, its kind and source, and its text."
)
DREAM_ANTHROPIC_SEARCH_QUERY = "the words to look for"
DREAM_ANTHROPIC_SEARCH_LIMIT = "how many messages at most (1 to {limit}, default {default})"
DREAM_ANTHROPIC_SEARCH_EMPTY = "the query has no words to search for; give one or more words"
DREAM_ANTHROPIC_SEARCH_NONE = "No message since the last dream matches {query!r}."
DREAM_ANTHROPIC_SEARCH_FOUND = (
    "The best matches for {query!r} among the messages since the last dream ({total} in all):"
)
DREAM_ANTHROPIC_MESSAGE = "[{message_id} · {captured_at} · {kind} from {source}]\n{text}"
DREAM_ANTHROPIC_CUT = " [... {more} more characters]"
DREAM_ANTHROPIC_TRANSCRIPT_SHOWN = "The transcript since the last dream:\n\n{messages}"
DREAM_ANTHROPIC_TRANSCRIPT_LONG = (
    "The transcript since the last dream has {chars:,} characters, too long to show here: read it with "
    "search_transcript."
)
DREAM_ANTHROPIC_NO_INSTRUCTIONS = "(none: use your judgement, and prefer small, well-founded edits)"

# The anthropic dreamer's first message: the conversation it consolidates.
DREAM_ANTHROPIC_TASK = """\
Conversation {conversation} of agent {agent}: the messages since the last dream, from {first} ({first_at}) \
to {last} ({last_at}), {count} in all. Consolidate what they teach into memory.

{transcript}"""

# Why a trigger event did or did not start a dream (triggers.py), as the session reports it.
TRIGGER_PENDING_FIRES = "the open dream was closed; its pending trigger fires"
TRIGGER_NOTHING_PENDING = "the open dream was closed; nothing is pending"
TRIGGER_STEPS = "{steps} of {of} assistant steps"
TRIGGER_OTHER = "the policy's trigger is {trigger}"
TRIGGER_OPEN_RECORDED = "a dream is recorded as open: the forge is asked again before running"
TRIGGER_FIRES = "trigger {trigger}"

# bot/dream/events.py: a dream an imported conversation's triggers asked for did not run.
HARNESS_DREAM_FAILED = ("the dream of conversation {conversation} did not run (it is tried again at its next "
                        "trigger): {problem}")
