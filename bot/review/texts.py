"""What `memrepo review` says: its refusals (one line each, with the exit code documented in
bot/commands/texts.py's REVIEW_EXIT_CODES) and the words of its list."""

from bot.texts import Text

# What a memory pull request is (the `kind` column).
KIND_DREAM = "dream"
KIND_AGENT_EDIT = "agent edit"
KIND_HARNESS = "harness commit"
KIND_OTHER = "memory change"

# What it waits for (the `waits for` column).
WAITS_REVIEW = "review"
WAITS_CHECKS = "checks"
WAITS_CONFLICT = "conflict"
WAITS_DRAFT = "draft"
WAITS_NOTHING = "merge"

LIST_HEADER = "#      kind            proposed by           conversation          waits for"
LIST_ROW = "#{number:<5} {kind:<15} {who:<21} {conversation:<21} {waits}"
LIST_EMPTY = "No memory pull request waits in {repository}."
LIST_COUNT = Text("{count:|open memory pull request|open memory pull requests} in {repository}; "
                  "`memrepo review show N` shows one.")
PROPOSED_BY_DREAMER = "dreamer for {agent}"
NO_CONVERSATION = "-"

SHOW_HEAD = "#{number} {title}\n{url}\n{kind}, proposed by {who}{conversation}; waits for {waits}."
SHOW_CONVERSATION = " in conversation {conversation}"
SHOW_BRANCH = "{head} -> {base} at {sha}, opened by {author}"
SHOW_REVIEWS = "reviews: {reviews}"
SHOW_NO_REVIEWS = "reviews: none"
SHOW_PROVENANCE_ABSENT = "No provenance block: nothing says which conversation this rests on."
SHOW_PROVENANCE_BAD = "The provenance block cannot be read: {problem}"
SHOW_SAID_HEADER = "What the user said (conversation {conversation} of agent {agent}{where}):"
SHOW_SAID_QUOTED = ", as the pull request quotes it"
SHOW_SAID_NONE = "The user's words are not available here: {reason}"
SHOW_SAID_LINE = "  {message_id} ({kind}, {at}): {text}"
SHOW_FILES = "Files ({count}):"
SHOW_FILE = "  {status:<9} {path} (+{additions} -{deletions})"
SHOW_PATCH_MISSING = "  (no text diff: binary or too large)"

APPROVED = "Approved #{number} at {sha}; the integrator merges it when nothing else waits."
REJECTED = "Requested changes on #{number} and closed it: {reason}"
MERGED = "Merged #{number} as {sha}."

# Refusals.
NO_TOKEN = ("no forge token for the person reviewing {repository}: set MEMREPO_REVIEW_TOKEN (or "
            "GITHUB_TOKEN) to your own token, not the agent's")
NO_SUCH_PULL = "{repository} has no pull request #{number}"
NOT_MEMORY = ("#{number} in {repository} is not a memory pull request (no memrepo: label or branch): "
              "review it on the forge")
NOT_OPEN = "#{number} in {repository} is {state}: there is nothing left to review"
NO_PERMISSION = "the forge refused to {what} #{number} in {repository} with this token ({status}): {answer}"
NOT_A_WRITER = "{login} may not write to it"
FORGE_FAILED = "the forge could not {what} #{number} in {repository}: {problem}"
OWN_PULL = ("#{number} was opened with your own token, and the forge lets nobody approve their own pull "
            "request: give the agent its own account's token in the remote URL (`memrepo repository set "
            "https://x-access-token:AGENT_TOKEN@HOST/OWNER/REPO.git`), or "
            "allow its author to merge (`review: {{allow_author_merge: true}}` in .memrepo/config.yml) and run "
            "`memrepo review merge {number}`")
MERGE_WAITS = "#{number} cannot be merged yet: it waits for {waits}"
MERGE_REFUSED = "the forge did not merge #{number}: {detail}"
REASON_EMPTY = "--reason must say what is wrong: the agent and whoever reads the pull request later see it"
NOT_A_NUMBER = "{value} is not a pull request number: give the number `memrepo review list` shows"

WHAT_LIST = "list the pull requests of"
WHAT_READ = "read"
WHAT_APPROVE = "approve"
WHAT_REJECT = "request changes on"
WHAT_CLOSE = "close"
WHAT_MERGE = "merge"

# `repository status --fetch` and `/doctor`.
WAITING_LABEL = "pull requests"
WAITING = Text("{count:|open memory pull request|open memory pull requests} in {repository}: {review} wait for "
               "review, {conflict} in conflict (`memrepo review list`)")
WAITING_NONE = "no memory pull request waits in {repository}"
WAITING_UNKNOWN = "not known: {reason}"
