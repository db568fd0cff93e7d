"""What the GitHub client says: how GitHub answered, the operation it was asked for (each
error names it), and a merge's outcome, which says whether it may have happened."""

from __future__ import annotations

from bot.texts import Text

FORGE_NEEDS_CREDENTIALS = (
    "the forge client needs a token, or a GitHub App id and private key (with an installation id, or the "
    "repository whose installation to find)"
)
FORGE_BAD_REPOSITORY = "'{repository}' is not a repository name of the form owner/name"
FORGE_BAD_MERGE_METHOD = "merge method '{method}' is not one of merge, squash, rebase"
FORGE_NOT_FOUND = "{operation}: not found (GitHub answered {answer})"
FORGE_UNAUTHORIZED = (
    "{operation}: GitHub refused the credentials (answered {answer}); check the token, or the App's private key "
    "and installation"
)
FORGE_FORBIDDEN = (
    "{operation}: not permitted (GitHub answered {answer}); the token or App installation lacks a permission"
)
FORGE_CONFLICT = "{operation}: conflict (GitHub answered {answer}); re-read the current state and decide again"
FORGE_NOT_ALLOWED = "{operation}: GitHub does not allow this now (answered {answer})"
FORGE_INVALID = "{operation}: GitHub refused the request as invalid (answered {answer})"
FORGE_REJECTED = "{operation}: GitHub answered {answer}"
FORGE_RATE_LIMITED = (
    "{operation}: rate limited by GitHub (answered {answer}); it asks to wait {wait:.0f}s, more than the "
    "{left:.0f}s left for this call; try again after {retry_at}"
)
FORGE_GAVE_UP = Text(
    "{operation}: gave up after {attempts:|attempt|attempts} in {elapsed:.1f}s; GitHub's last answer: {answer}"
)
FORGE_UNCERTAIN_WRITE = (
    "{operation}: {answer}; the change may or may not have been made, so it was not sent again; re-read before "
    "trying again"
)
FORGE_BAD_ANSWER = "{operation}: GitHub's answer is not what its API documents ({problem})"
FORGE_ANSWER_TOO_LONG = "the answer is {size} characters long, longer than the {limit} memrepo reads"
FORGE_ANSWER_TOO_DEEP = "the answer nests arrays and objects deeper than a JSON parser can descend"
FORGE_THE_ANSWER = "the answer"  # the {what} of bot.texts.JSON_TOO_DEEP for a forge answer
FORGE_NOT_A_LIST = "expected a list"  # the {problem} of FORGE_BAD_ANSWER for a page that is not a list
FORGE_NOT_A_FILE = "{operation}: '{path}' is a {kind}, not a file"
FORGE_ANSWER_STATUS = "HTTP {status}: {message}"
FORGE_ANSWER_NO_BODY = "HTTP {status}"
FORGE_ANSWER_TIMEOUT = "no answer ({error})"
FORGE_ANSWER_NOT_SENT = "could not connect ({error})"
FORGE_OP_INSTALLATION = "find the GitHub App installation of {repo}"
FORGE_OP_INSTALLATION_TOKEN = "get an installation token for GitHub App {app_id} (installation {installation})"
FORGE_OP_OPEN_PULL = "open a pull request from {head} into {base} in {repo}"
FORGE_OP_FIND_PULL = "look for the pull request from {head} into {base} in {repo}"
FORGE_OP_READ_PULL = "read pull request #{number} of {repo}"
FORGE_OP_LIST_PULLS = "list the open pull requests of {repo}"
FORGE_OP_MERGE = "merge pull request #{number} of {repo} at {sha}"
FORGE_OP_IS_MERGED = "check whether pull request #{number} of {repo} is merged"
FORGE_OP_COMMENT = "comment on #{number} of {repo}"
FORGE_OP_ADD_LABELS = "add labels {labels} to #{number} of {repo}"
FORGE_OP_REMOVE_LABEL = "remove label {label} from #{number} of {repo}"
FORGE_OP_SET_STATUS = "set status '{context}' to {state} on {sha} in {repo}"
FORGE_OP_COMBINED_STATUS = "read the combined status of {ref} in {repo}"
FORGE_OP_REVIEWS = "list the reviews of pull request #{number} of {repo}"
FORGE_OP_PULL_FILES = "list the files of pull request #{number} in {repo}"
FORGE_OP_REVIEW = "submit a {event} review on pull request #{number} in {repo}"
FORGE_OP_PULL_COMMITS = "list the commits of pull request #{number} of {repo}"
FORGE_OP_ACTIVITY = "read who pushed to {branch} of {repo}"
FORGE_OP_PERMISSION = "read the permission of {login} on {repo}"
FORGE_OP_WHO_AM_I = "ask the forge which account acts for {repo}"
FORGE_OP_COMPARE = "compare {base}...{head} in {repo}"
FORGE_OP_PULLS_FOR_COMMIT = "list the pull requests of commit {sha} in {repo}"
FORGE_OP_GET_COMMIT = "read commit {sha} of {repo}"
FORGE_OP_GET_REF = "read ref {ref} of {repo}"
FORGE_OP_UPDATE_REF = "move ref {ref} of {repo} to {sha}"
FORGE_OP_READ_FILE = "read {path} at {ref} in {repo}"
FORGE_OP_UPDATE_BRANCH = "update the branch of pull request #{number} of {repo}"
MERGE_DONE = "merged pull request #{number} as {sha}"
MERGE_DONE_AFTER_LOST_ANSWER = (
    "the merge of #{number} got {answer}; GitHub then reported it merged (as {sha}); it was not sent again"
)
MERGE_ALREADY = "pull request #{number} was already merged (as {sha})"
MERGE_HEAD_MOVED = "pull request #{number} was not merged: its head is no longer {sha} ({answer}); re-read it"
MERGE_BASE_MOVED = "pull request #{number} was not merged: its base branch moved ({answer}); re-read it"
MERGE_NOT_MERGEABLE = "pull request #{number} cannot be merged ({answer})"
MERGE_NOT_MERGED_AFTER_LOST_ANSWER = (
    "the merge of #{number} got {answer}; GitHub then reported it not merged; it was not sent again, re-read it "
    "and decide again"
)
MERGE_NOT_SENT = "the merge of #{number} never reached GitHub ({answer}); nothing was merged"
MERGE_RATE_LIMITED = "the merge of #{number} was refused by a rate limit ({answer}); not merged, retry in {wait:.0f}s"
MERGE_UNKNOWN = (
    "the merge of #{number} got {answer} and whether it merged could not be checked ({check}); re-read it before "
    "deciding"
)
FORGE_BAD_APP_KEY = "GitHub App {app_id}: its private key cannot sign a token ({problem})"
INTEGRATOR_OP_CLOSE = "close pull request #{number} of {repo}"

# The shared request budget (bot/forge/shared.py).
FORGE_BUDGET_SPENT = (
    "the request budget of this forge identity is spent for {wait:.0f}s more ({limits}); not sent, "
    "so that GitHub does not answer a secondary rate limit"
)
FORGE_OP_BUDGET = "wait for the request budget ({kind})"
FORGE_BUDGET_LIMITS = (
    "{0:g} content-generating requests a minute, {1:g} an hour, {2:g} points a minute, {3:g} requests an hour"
)
