"""What `memrepo follow` says, and the follower's line in `repository status`."""

from __future__ import annotations

from bot.texts import Text

FOLLOW_DESCRIPTION = """\
Keep a memory folder that a harness writes itself (Letta Code, or any agent that edits the
folder through a shell and commits with git) on one main with its forge, for as long as it runs.

  - The harness's commits are pushed as soon as they are made: fetch, replay onto the forge's
    main when it moved (what cannot be replayed is set aside on a backup ref and said), push,
    never forced.
  - What is merged on the forge (a dream, a person's edit) is brought into the folder at the
    receiver's head event (--events), or at the next fetch (--poll) when no stream is given.
    A harness that reads HEAD before each model call, as Letta Code does, sees it at once.
  - A working tree with uncommitted or staged changes, or new files not added yet, is never
    touched: follow waits, says so once, and goes on when the harness has committed.
  - Each commit is routed as the memory tool routes a call, by the policy of the forge's main:
    a protected path, a rule file (.memrepo/config.yml, .memfs.config.json), a large edit or a
    commit whose `Source` trailers name outside content is taken off the folder's main, kept
    on refs/memrepo/held/..., and proposed as a pull request that waits for the integrator or a
    person; the commits the policy allows are pushed. `repository status` lists what waits.
  - Letta Code's post-commit hook (`/memory-repository set`) may stay: a push of it that the
    forge refuses because main moved is repaired by the next pass, which replays and pushes.
    follow (and `repository set`) install a pre-push hook in the folder that refuses a push
    of main adding a commit the policy holds, so the hook's own push cannot land it before
    follow proposes it; a pre-push hook of your own is kept as pre-push.chained and runs after.

With --transcripts it also imports Letta Code's conversations into the transcript store as
they grow (as `memrepo transcript import --from letta` does), so dreams have them.

The folder must be connected first (`memrepo repository set URL --repo DIR`). The event stream
is opened with the clone's own forge token (MEMREPO_FORGE_TOKEN, GITHUB_TOKEN, or the token in
origin's URL). `memrepo repository status` shows whether a follower runs. Ctrl-C (or SIGTERM)
stops it after the pass under way."""
FOLLOW_REPO_HELP = "the memory folder the harness writes (default: the current folder)"
FOLLOW_EVENTS_HELP = ("the receiver's event stream, http(s)://HOST/v1/repos/OWNER/NAME/events: take the forge's main "
                      "at each head event (without it, follow polls)")
FOLLOW_POLL_HELP = ("fetch the forge's main every SECONDS (default: {default:g}); with --events, only while the "
                    "stream is down")
FOLLOW_TRANSCRIPTS_HELP = ("also import Letta Code's transcripts from DIR as they grow, every poll, so dreams have "
                           "them (default DIR: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts)")
FOLLOW_ONCE_HELP = ("one pass (push, pull or replay), then exit: 1 if a commit was set aside, if the pull request of "
                    "a commit held for review could not be opened, or if nothing could be synced or imported")
FOLLOW_BAD_POLL = "--poll must be a positive number of seconds, found {value}"
FOLLOW_NOT_CONNECTED = ("{path} is not connected to a forge; connect it first with "
                        "`memrepo repository set URL --repo {path}`")
FOLLOW_ALREADY = "a follower already runs for {path} (pid {pid}); one per folder is enough"

FOLLOW_STARTED = "memrepo follow: following {path} with {url} ({how}); Ctrl-C stops"
FOLLOW_HOW_EVENTS = "head events from {events}; a fetch every {seconds:g}s while the stream is down"
FOLLOW_HOW_POLL = "a fetch every {seconds:g}s; no event stream was given (--events)"
FOLLOW_STOPPED = "memrepo follow: stopped following {path}"
FOLLOW_HOOK_HERE = ("Letta Code's post-commit hook pushes here too; a push of it that the forge refuses is replayed "
                    "and pushed by follow")
FOLLOW_HOOK_ELSEWHERE = ("Letta Code's post-commit hook pushes to {hook}, not to origin ({origin}): follow keeps "
                         "origin only; point both at one repository (`/memory-repository set` in Letta Code, or "
                         "`memrepo repository set`)")

FOLLOW_WAIT_DIRTY = ("waiting: {path} has uncommitted or staged changes ({paths}); nothing is touched until the "
                     "harness commits or discards them")
FOLLOW_WAIT_BUSY = "waiting: a git command is at work in {path} (.git/index.lock exists)"
FOLLOW_WAIT_BRANCH = "waiting: {path} has {branch} checked out, not main; follow keeps main only"
FOLLOW_DETACHED = "a detached HEAD"
FOLLOW_IMPORT_FAILED = "transcripts not imported ({problem}); trying again every {seconds:g}s"
FOLLOW_FAILED = "not synced ({reason}); trying again, less often while it lasts"

STATUS_FOLLOWER = "follower"
STATUS_FOLLOWER_NONE = "none (`memrepo follow` keeps a folder a harness writes in sync)"
STATUS_FOLLOWER_RUNNING = Text("running (pid {pid}, since {started:when}; {mode}; last seen {age:.0f}s ago)")
STATUS_FOLLOWER_STALE = Text("stale: pid {pid} is gone or silent since {seen:when} without stopping cleanly; "
                             "nothing follows this folder")
FOLLOWER_MODE_EVENTS = "head events"
FOLLOWER_MODE_POLL = "a fetch every {seconds:g}s"

FOLLOW_HELD = Text("held back from main, for review: {count:|commit|commits} ({subjects}), because {reasons}; "
                   "kept at {ref}")
FOLLOW_HELD_PROPOSED = "pull request #{number} ({url}) waits for review: {subjects}, because {reasons}"
FOLLOW_HELD_NOT_PROPOSED = ("commits held back from main ({subjects}) are kept at {ref}; opening their pull request "
                            "failed ({problem}); trying again at the next pass")
FOLLOW_HELD_DONE = "pull request #{number} was {state}; {ref} is no longer kept"
FOLLOW_HELD_BUILDS_ON = "it builds on a commit held back for review"

STATUS_HELD = "waiting for review"
STATUS_HELD_OPEN = "#{number} {url}: {subjects} ({reasons})"
STATUS_HELD_UNPROPOSED = "not proposed yet, kept at {ref}: {subjects} ({reasons}; {problem})"

# The pre-push guard (guard.py): one line on standard error, which git shows and Letta Code's
# hook logs; each starts with "memrepo: " (bot/memfs/sync's push reads a hook's refusal by it).
GUARD_HELD = ("memrepo: commit {sha} \"{subject}\" waits for review ({reasons}), so this push to main is refused; "
              "memrepo follow takes it off main and opens its pull request")
GUARD_UNKNOWN_BASE = ("memrepo: the remote's main ({sha}) is not in this folder, so the commits this push adds cannot "
                      "be judged; fetch it first (memrepo follow does)")
GUARD_FAILED = "memrepo: this push to main could not be judged ({problem}), so it is refused"
GUARD_INPUT_TOO_LONG = "memrepo: the pre-push hook was given more than {limit} characters, so the push is refused"
GUARD_CHAINED = "your pre-push hook is now {chained}; it runs after memrepo's pre-push guard ({hook})"
GUARD_CHAINED_TAKEN = ("{hook} is not memrepo's and {chained} is taken, so memrepo's pre-push guard is not installed; "
                       "merge the two hooks into {chained}, remove {hook}, and run the command again")
GUARD_INSTALLED = ("pre-push guard installed ({hook}): a push of main that would add a commit the policy keeps for "
                   "review is refused, and memrepo follow opens its pull request")

# Commits a harness made in a shared memory's projection.
FOLLOW_SHARED_PROPOSED = Text(
    "{name}: pull request #{number} ({url}) on the shared memory now holds the {count:|commit|commits} made in its "
    "projection, waiting for its review; the projection is back on its main, the commits kept at {ref}")
FOLLOW_SHARED_NOT_PROPOSED = Text(
    "{name}: the {count:|commit|commits} made in its projection wait there; opening their pull request on the "
    "shared memory failed, the next pass tries again: {problem}")
FOLLOW_SHARED_READ_ONLY = Text(
    "{name}: the {count:|commit|commits} made in its projection at {path} stay there: this agent attached it "
    "read-only; propose them on {url} itself")
FOLLOW_SHARED_SETTLED = "{name}: pull request #{number} on the shared memory was {state}; {ref} is removed"
