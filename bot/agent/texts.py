"""What an agent session says to the agent and its user: where an edit went and why (a commit,
or a pull request that must be reviewed), the slash commands' answers, the event stream's state
and /doctor's report. Each says what memory holds now, so the agent does not rely on an edit
that has not landed."""

from __future__ import annotations

from bot.texts import Text

# The package's lazy names (__init__.py): a name it does not have.
AGENT_NO_ATTRIBUTE = "module 'bot.agent' has no attribute {name!r}"

# Where an edit goes (routing.py) and what the agent is told about it.
AGENT_ROUTE_UNTRUSTED = "the turn included content from outside the conversation ({sources})"
AGENT_ROUTE_SHARED = "it changes shared memory {name}, which is attached to other agents too and changes only " \
    "through the pull requests its team reviews"
AGENT_ROUTE_PROTECTED = "it touches protected memory: {paths}"
AGENT_ROUTE_RULES = "it changes the rules memory is judged by ({paths}), which only a person may change"
AGENT_ROUTE_CONFLICT = "it could not be replayed onto main, which had moved: {reason}"
AGENT_SET_ASIDE_PROPOSED = ("Commit {sha} \"{message}\" could not be replayed onto main ({reason}); it is now pull "
                            "request #{number} ({url}), where the integrator or a person resolves it.")
AGENT_SET_ASIDE_NOT_PROPOSED = ("Commit {sha} \"{message}\" could not be replayed onto main and is kept at {ref}; "
                                "opening a pull request for it failed ({problem}); it stays there until a person "
                                "deals with it.")
AGENT_ROUTE_EMPTIES_CORE = "it deletes the last file of core memory (system/), which would leave the agent with none"
AGENT_ROUTE_TOO_LARGE = "it changes {lines} lines, more than the {limit} a direct commit may change " \
                        "(direct_commit.max_changed_lines)"
AGENT_HARNESS_COMMAND = "git commit (made by the harness in the memory folder)"
AGENT_HARNESS_COMMITS = Text("{count:|commit|commits} the harness made in the memory folder")
AGENT_HARNESS_COMMITS_MADE = "Made in the memory folder, and held back from main by memrepo follow:\n{commits}"
AGENT_HARNESS_COMMIT_LINE = "- {sha} {subject}"
AGENT_EDIT_TITLE = "memory edit by {agent}: {reason}"
AGENT_EDIT_TITLE_NOTED = "memory edit by {agent} ({notes}): {reason}"
AGENT_EDIT_NOTE_UNTRUSTED = "untrusted, needs approval"
AGENT_EDIT_NOTE_EMPTIES_CORE = "deletes all core memory"
AGENT_EDIT_NOTE_DELETES_CORE = "deletes core memory"
AGENT_EDIT_CHANGED = Text("{lines:|line|lines} changed in {files:|file|files}")
AGENT_EDIT_TRANSCRIPT = Text("{count:|message|messages}, `{first}` ({first_at}) to `{last}` ({last_at})")
AGENT_EDIT_OPENED = "Not in main yet: this edit went to pull request #{number} ({url}) on branch {branch}, " \
                    "because {reasons}. {next}"
AGENT_EDIT_NEXT_REVIEW = "A person must approve it before it is merged; until then memory is unchanged, " \
                         "so do not rely on this edit."
AGENT_EDIT_NEXT_INTEGRATOR = "The integrator merges it once it is valid; memory changes only then."
AGENT_EDIT_NEEDS_REMOTE = "This edit was not made: it must go through a pull request ({reasons}), but memory " \
                          "has no remote. {connect}"
AGENT_CONNECT_HINT = "Connect one with /memory-repository set <url>."
AGENT_EDIT_PR_FAILED = "This edit was not made: it must go through a pull request ({reasons}), and opening it " \
                       "failed: {problem}. Memory is unchanged; try again later."
AGENT_EDIT_NOT_APPLICABLE = "the edit does not apply to main as it is on the remote ({base}): {problem}"
AGENT_EDIT_UNLABELLED = "pull request #{number} was opened but could not be labelled ({problem}); it was closed " \
                        "again so that nothing merges it without the review its labels ask for"
AGENT_EDIT_WITHDRAWN_COMMENT = """\
**memrepo closed this pull request: its labels could not be set** ({problem}), and without them
nothing would hold it for the review it needs. The edit was not made and the agent was told so.

Nothing needs doing here: the agent may make the edit again, which opens a new pull request.
"""

# Slash commands (commands.py, sleeptime.py).
AGENT_NOT_A_COMMAND = "not a command (commands start with /); known commands: {commands}"
AGENT_UNKNOWN_COMMAND = "unknown command {command}; known commands: {commands}"
AGENT_COMMAND_USAGE = "usage: /{command} {usage}"
AGENT_COMMAND_USAGES = {
    "memory-repository": "set <url> | status | unset | sync",
    "dream": "(no arguments: a dream now)",
    "sleeptime": "off | steps <N> | compaction (no argument: show when dreams run)",
    "recompile": "(no arguments)",
    "remember": "<what to remember>",
    "doctor": "(no arguments)",
}
AGENT_SLEEPTIME_STEPS = "every {steps} assistant steps"
AGENT_SLEEPTIME_COMPACTION = "when the context is compacted"
AGENT_SLEEPTIME_OFF = "only on /dream (automatic dreams are off)"
AGENT_SLEEPTIME_SHOW_POLICY = "dreams run {what} (the repository's policy)"
AGENT_SLEEPTIME_SHOW_SETTING = "dreams run {what} (this agent's /sleeptime setting; the policy says {policy})"
AGENT_SLEEPTIME_SET = "from now on dreams run {what}"
AGENT_RECOMPILED = "system prompt recompiled from {sha}: {chars:,} characters"
AGENT_NOTES_DESCRIPTION = "Notes the user asked the agent to remember, each dated when it was noted."
AGENT_NOTES_TITLE = "Notes"
AGENT_REMEMBER_REASON = "Remember, as the user asked: {summary}"
AGENT_REMEMBERED = "noted in {path}: {result}"
AGENT_DREAM_FAILED = "the dream could not run: {problem}. Memory and the dreamer's cursor are unchanged; the " \
                     "request is remembered and runs at the next trigger."
AGENT_DREAM_CRASHED = "the dream stopped on an unexpected error ({error}); memory and the dreamer's cursor " \
                      "are unchanged"
AGENT_COMMAND_CRASHED = "/{command} stopped on an unexpected error ({error}); nothing was changed"

# The head event stream, as the session reports it.
AGENT_STATUS_STREAM = "event stream"
AGENT_STREAM_OFF = "not followed (no event stream configured)"
AGENT_STREAM_CONNECTED = "connected to {url}"
AGENT_STREAM_DOWN = "not connected to {url} ({problem}); reconnecting with backoff, and memory is brought up " \
                    "to date on reconnect"
AGENT_STREAM_CONNECTING = "connecting"

# /doctor (doctor.py).
AGENT_DOCTOR_CORE = "core memory (system/): {chars:,} of {limit:,} characters ({percent}%)"
AGENT_DOCTOR_LARGEST = "largest blocks:"
AGENT_DOCTOR_BLOCK = "  {path}: {chars:,} characters ({percent}% of the file limit)"
AGENT_DOCTOR_OVER = "over the file limit: {path} has {chars:,} characters, the limit is {limit:,}; shorten it " \
                    "or move parts out of it"
AGENT_DOCTOR_NEAR = "close to the file limit: {path} has {chars:,} of {limit:,} characters"
AGENT_DOCTOR_UNDESCRIBED = Text(
    "{count:|file|files} without a description (the prompt's tree shows descriptions): {paths}"
)
AGENT_DOCTOR_ALL_DESCRIBED = "every memory file has a description"
AGENT_DOCTOR_NO_REMOTE = "no remote: memory lives only in this clone (connect one with /memory-repository set <url>)"
AGENT_DOCTOR_PENDING = Text(
    "{count:|commit|commits} not pushed yet (they go with the next push or /memory-repository sync)"
)
AGENT_DOCTOR_NOTHING_PENDING = "nothing waiting to be pushed"
AGENT_DOCTOR_BACKUPS = "commits set aside by a conflicting sync (see them with git log): {refs}"
AGENT_DOCTOR_STREAM = "event stream: {state}"
AGENT_DOCTOR_HEALTHY = "memory is healthy"
AGENT_DOCTOR_ATTENTION = "memory needs attention (see above)"

# archival_memory_search and conversation_search (memgpt.py): paged results, in MemGPT's shape:
# the line, then the results as JSON.
SEARCH_PAGE = "Showing {shown} of {total} results (page {page}/{last}): {results}"
SEARCH_NONE = "No results found."
SEARCH_PAGE_PAST = "page {page} is past the last page of results ({last}); pages count from 0"
CONVERSATION_NO_TRANSCRIPT = ("no conversation is recorded for this agent here: conversation_search reads the "
                              "transcripts of the agent's session (memrepo's transcript store)")
CONVERSATION_RESULT = "timestamp: {timestamp}, {role} - {text}"
CONVERSATION_BAD_ROLE = "unknown role '{role}'; use some of: {roles}"

# Shared memory through the memory tool (bot/agent/shared.py).
AGENT_SHARED_READ_ONLY = "shared memory {name} is attached read-only: this edit was not made; propose it as a " \
    "pull request on {url}"
AGENT_SHARED_NO_FORGE = "This edit to shared memory {name} was not made: it becomes a pull request on {url}, " \
    "and that needs a forge: {problem}"
