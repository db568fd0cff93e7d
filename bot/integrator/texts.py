"""What the integrator says: why it chose an action (its logs and the CLI), the commit statuses
and comments a person reads on a pull request, its resolution commits, and its jobs' problems."""

from __future__ import annotations

from bot.texts import Text

# Why decide chose its action (logs and the CLI).
INTEGRATOR_WHY_NOT_MEMREPO = "not a memrepo pull request (no memrepo: label, no memrepo/dream/ or memrepo/edit/ branch)"
INTEGRATOR_WHY_MERGED = "merged, and its head event was published"
INTEGRATOR_WHY_PUBLISH = "merged; the head event is not published yet"
INTEGRATOR_WHY_CLOSED = "closed without merging"
INTEGRATOR_WHY_DRAFT = "a draft; nothing is done until it is ready for review"
INTEGRATOR_WHY_GIVE_UP = Text(
    "{attempts:|attempt|attempts} made, the limit is {limit}: giving up and leaving it for a person"
)
INTEGRATOR_WHY_UNKNOWN = "the merge's answer was lost and whether it merged is unknown: ask again before anything else"
INTEGRATOR_WHY_NOT_MERGED_LOST = "the merge's answer was lost and GitHub says it did not merge: re-read, decide again"
INTEGRATOR_WHY_NOT_MERGED = "the merge was not made (refused or rate limited): re-read and decide again"
INTEGRATOR_WHY_REFUSED = "the merge was refused ({answer}): re-read and decide again"
INTEGRATOR_WHY_NO_HEAD = "the head sha is not known yet"
INTEGRATOR_WHY_VALIDATE = "no validation result for the current head"
INTEGRATOR_WHY_INVALID_CLOSE = "the dream does not validate: failure status, comment, close (its cursor stays)"
INTEGRATOR_WHY_INVALID_OPEN = "does not validate: failure status and comment; left open for a person"
INTEGRATOR_WHY_INVALID_WAITING = "does not validate and says so; waiting for a person to push a fix"
INTEGRATOR_WHY_MERGEABLE_UNKNOWN = "GitHub is still computing whether it can be merged"
INTEGRATOR_WHY_CONFLICT_CLOSE = "conflicts with its base under merge: auto: close (cursor stays; a later dream retries)"
INTEGRATOR_WHY_RESOLVE = "conflicts with its base under merge: {mode}: bring the base into the branch and resolve"
INTEGRATOR_WHY_CONFLICT_MARK = "conflicts with its base and resolving them failed for this head"
INTEGRATOR_WHY_CONFLICT_WAITING = "conflicts marked for a person; waiting for a push"
INTEGRATOR_WHY_REVIEW = (
    "needs an approving review of this head by someone who may write to the repository, other than its author, "
    "the authors of its commits and whoever pushed to its branch"
)
INTEGRATOR_WHY_FORK = (
    "its head is a branch of {head}, not of {base}: the integrator acts only on branches of the repository itself "
    "(a person may merge it)"
)
INTEGRATOR_WHY_NOT_WRITER = (
    "opened by {author}, whose permission on the repository is '{permission}': the integrator acts only for "
    "those who may write (a person may merge it)"
)

# Why a review does not count towards an approval.
INTEGRATOR_REVIEW_NO_AUTHOR = "it has no author"
INTEGRATOR_REVIEW_BY_AUTHOR = "it is by the pull request's author"
INTEGRATOR_REVIEW_BY_INTEGRATOR = "it is by the integrator"
INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR = "it is by the author of a commit on the pull request"
INTEGRATOR_REVIEW_NOT_WRITER = "its author may not write to the repository"
INTEGRATOR_REVIEW_BY_PUSHER = "it is by someone who pushed to the pull request's branch"
INTEGRATOR_REVIEW_PUSHER_UNKNOWN = (
    "who pushed the pull request's head is not known (the forge's repository activity does not say), so no "
    "approval counts"
)
INTEGRATOR_WHY_NOT_DEFAULT_BRANCH = (
    "its base is {base}, not the repository's default branch {default}: the integrator merges only into the "
    "default branch (a person may merge it)"
)
INTEGRATOR_WHY_CHANGES_REQUESTED = "a reviewer requested changes"
INTEGRATOR_WHY_UNTRUSTED = (
    "its commits name content from outside the conversation ({sources}): needs an approving review of this "
    "head by someone who may write, other than its author"
)
INTEGRATOR_WHY_REVIEW_WAITING = "marked as waiting for review"
INTEGRATOR_WHY_STATUS_SUCCESS = "valid: the memrepo/validate status says so before the merge"
INTEGRATOR_WHY_MERGE = "valid, mergeable and approved where needed: merge with the head sha"

# Commit status descriptions (at most 140 characters).
INTEGRATOR_STATUS_VALID = "memory is valid"
INTEGRATOR_STATUS_INVALID = Text("{count:|problem|problems}: {first}")
INTEGRATOR_STATUS_AUTHOR_MERGE = "valid; waits for a review, or for its author to merge it (review.allow_author_merge)"
INTEGRATOR_STATUS_REVIEW = "waiting for review"

# Pull request comments.
INTEGRATOR_MORE = "- ... and {count} more"
INTEGRATOR_NOTHING_LISTED = "(none given)"
INTEGRATOR_INVALID_COMMENT = """\
**memrepo could not merge this: the memory at {sha} does not validate.**

{problems}

{outcome}
"""
INTEGRATOR_INVALID_CLOSED = (
    "This dream is closed. Its transcript cursor did not move, so a later dream covers the same messages again. "
    "Nothing needs doing; if a rule above is what should change, change it in `.memrepo/config.yml` in a "
    "reviewed commit, and the next dream is checked against it."
)
INTEGRATOR_INVALID_OPEN = "It stays open: push a fix to this branch and it is validated again."
INTEGRATOR_CONFLICT_CLOSED_COMMENT = """\
**memrepo closed this dream: it conflicts with `{base}`**, and the repository's merge mode is `auto`,
which closes a conflicting dream rather than resolve it. Its transcript cursor did not move, so a later
dream covers the same messages again, starting from the current `{base}`.

What you can do: nothing, and the next dream redoes this on top of `{base}`; or, to have memrepo resolve
conflicts instead, set `merge: explicit` (or `review`) in `.memrepo/config.yml` in a reviewed commit.
"""
INTEGRATOR_CONFLICT_COMMENT = """\
**memrepo could not resolve the conflicts between this branch (at {sha}) and `{base}`.**

Labelled `{label}` and left open for a person: merge `{base}` into this branch, fix the conflicts and
push; the result is validated again and merged under the repository's merge policy.
"""
INTEGRATOR_UNTRUSTED_COMMENT = """\
**memrepo will not merge this without a person's approval.** Its commits say, in their `Source`
trailers, that they were made from content from outside the conversation:

{sources}

Such content can carry instructions aimed at the agent rather than at you. Labelled `{label}`; the
approval is needed whatever the labels say. Approve only if the change is what the user wants; close
the pull request otherwise.
"""
INTEGRATOR_GIVE_UP_COMMENT = Text("""\
**memrepo gave up on this pull request after {attempts:|attempt|attempts}.** What was tried:

{history}

Labelled `{label}` and left open for a person. Any new push or review starts over.
""")

# The model-backed resolver (resolve.py); shown after "path: ".
RESOLVE_LLM_TIMEOUT = "the LLM endpoint {url} did not answer within {seconds:g}s"
RESOLVE_LLM_UNREACHABLE = "the LLM endpoint {url} cannot be reached ({problem})"
RESOLVE_LLM_STATUS = "the LLM endpoint {url} answered HTTP {status}: {answer}"
RESOLVE_LLM_SHAPE = "the LLM endpoint's answer has no choices[0].message.content"
RESOLVE_LLM_EMPTY = "the LLM answered with no text"

# Jobs, and a resolution's commit and its history notes.
INTEGRATOR_NO_CREDENTIALS = (
    "the integrator needs forge credentials: set one of {tokens} to a token, or {app} with "
    "MEMREPO_APP_PRIVATE_KEY (or MEMREPO_APP_PRIVATE_KEY_FILE) for a GitHub App"
)
INTEGRATOR_GIT_FAILED = "git {what} for {repo} failed: {problem}"
INTEGRATOR_PULL_GONE = "the pull request no longer exists"
INTEGRATOR_ALREADY_MERGED = "already merged and its new head published"
INTEGRATOR_TOO_MANY_STEPS = "{steps} decisions in one run; coming back shortly to continue"
INTEGRATOR_RESOLUTION_COMMIT = """\
Merge {base} into {branch}: conflicts resolved by memrepo

Markdown-aware three-way merge (frontmatter key by key, lists as a union) of the files both
sides changed; validated before it was pushed.

Files both sides changed:
{paths}{notes}
"""
INTEGRATOR_RESOLVED_AFTER_REVIEW = (
    "it is merged only once a person other than its author approves this new head."
)
INTEGRATOR_RESOLVED_AFTER_MERGE = "it is merged next, under the repository's merge mode (`{mode}`)."
INTEGRATOR_RESOLVED_TODO_REVIEW = (
    "If it is right, approve it; if not, push a fix to this branch (it is validated again) or close the "
    "pull request."
)
INTEGRATOR_RESOLVED_TODO_MERGE = (
    "It reaches `{base}` without waiting for a review: if the result is wrong, fix the file on `{base}` in a "
    "reviewed pull request, or revert the merge."
)
INTEGRATOR_CONFLICT_DETAILS = "\nWhat could not be merged automatically:\n\n{details}\n"
INTEGRATOR_NOTE_VALIDATED = Text("validated {sha}: {count:|problem|problems}")
INTEGRATOR_NOTE_WAITED = "waited {seconds:.1f}s: {why}"
INTEGRATOR_NOTE_MERGE = "merge at {sha}: {outcome}"
INTEGRATOR_NOTE_RESOLVED = "resolved conflicts with {base}: pushed {sha}"
INTEGRATOR_NOTE_RESOLVE_STALE = "resolution of {sha} not pushed: the branch moved meanwhile"
INTEGRATOR_NOTE_RESOLVE_FAILED = Text("resolution of {sha} failed: {count:|conflict or problem|conflicts or problems}")
INTEGRATOR_NOTE_REREAD = "re-read: {why}"
INTEGRATOR_LOCK_LOST = "the lock on {repo} lapsed while the integrator acted; the job starts over from a fresh read"

# Merging in batches (bot/integrator/jobs.py merge_ready, workspace.merge_onto)
INTEGRATOR_BATCH_RESOLVED = (
    "{title}\n\nConflicts with the branch as the batch before it left it were resolved in this merge commit, "
    "by the integrator's markdown-aware merge:\n\n{paths}{notes}")
INTEGRATOR_PUSH_REFUSED = "the forge refused the push to {ref} of {repo}: {answer}"
INTEGRATOR_PUSH_FORBIDDEN = (
    "The forge does not let the integrator push to {branch} of {repo} ({problem}); pull requests are merged "
    "one by one through the merge API for the next hour. Let the integrator bypass the branch's rules "
    "(docs/architecture.md §6.6) to merge in batches.")
INTEGRATOR_NOTE_READY = "ready to merge at {sha} in the next batch"
INTEGRATOR_WHY_MERGE_BATCH = "valid, mergeable and approved where needed: merge in the next batch with head sha"
INTEGRATOR_BATCH_NOTHING = "nothing ready to merge"
INTEGRATOR_BATCH_ONE_BY_ONE = "merged one by one through the merge API"
INTEGRATOR_BATCH_MERGED = "merged {count} in one push, main at {sha}"
