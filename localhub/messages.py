"""Every sentence localhub says: first in its own words, then GitHub's own wording, which it
answers with word for word. Kept in one place so they read alike, so GitHub's wording is easy
to check against GitHub's, and so localhub needs nothing of memrepo's to say them."""

ADMIN_LOOPBACK_ONLY = (
    "localhub's own endpoints (/_localhub/) answer only requests addressed to a loopback host "
    "(127.0.0.1, localhost or [::1]); this one was addressed to {host!r}"
)
ADMIN_NEEDS_OPERATOR = (
    "localhub's own endpoints (/_localhub/) need localhub's operator credential "
    "(Authorization: Bearer <the operator-token file in localhub's data folder>)"
)
ADMIN_NEEDS_JSON = (
    "localhub's own endpoints (/_localhub/) take a JSON body (Content-Type: application/json), not {given}"
)
NO_CONTENT_TYPE = "a body without a Content-Type"
BOT_NO_TOKEN = "{login} is an App's account: it acts only through its installation's tokens"
# Requests GitHub would accept that localhub does not model.
NO_PENDING_REVIEWS = "localhub does not support pending reviews: pass event APPROVE, REQUEST_CHANGES or COMMENT"
NO_REVIEW_COMMENTS = "localhub does not support review comments: put the text in the review body"

# A 401 to a token this localhub does not know: most often one made by another localhub (another
# data folder) that used the same port before. The data folder is named only to requests
# addressed to a loopback host, as the admin endpoints answer only those.
UNKNOWN_TOKEN = (
    "this localhub keeps its data in {data} and knows no such token: a token is known only to the "
    "localhub on the data folder that made it"
)
UNKNOWN_TOKEN_REMOTE = (
    "this localhub knows no such token: a token is known only to the localhub on the data folder that made it"
)

# Refused requests, in localhub's words where GitHub has none to copy.
LOGIN_INVALID = "login must be 1-39 letters, digits or single hyphens"
REPOSITORY_NAME_INVALID = "name is not a valid repository name"
REPOSITORY_NAME_TAKEN = "name already exists on this account"
PERMISSION_NOT_ONE_OF = "permission must be one of: {choices}"
NO_PUBLIC_URL = "localhub has no public URL yet"
COMMITS_CONFLICT = "{ours} and {theirs} conflict"
COMMIT_DOES_NOT_APPLY = "{commit} does not apply"
DELIVERY_NOT_MILLISECONDS = "{key} must be a whole number of milliseconds"

# Faults (/_localhub/faults): the field a fault names wrongly.
FAULT_UNKNOWN_FIELD = "unknown field; expected some of {fields}"
FAULT_METHOD = "method must be one of {methods}"
FAULT_PATH = "path is required: a glob such as /repos/*/pulls/*/merge"
FAULT_STATUS = "status must be an HTTP status code from 200 to 599"
FAULT_BODY = "body must be a JSON object, an array or a text"
FAULT_HEADERS = "headers must be an object of name: value"
FAULT_HEADER = "header {key!r} must have a name and a text or number value"
FAULT_TIMES = "times must be an integer from 1 to {limit}"
FAULT_APPLY = "apply must be true or false"
FAULT_DELAY = "delay_ms must be a number of milliseconds from 0 to {limit}"

# GitHub's own wording, word for word: clients (PyGithub, memrepo's forge client) match on some of it.
# Shared by several endpoints.
NOT_FOUND = "Not Found"
BAD_CREDENTIALS = "Bad credentials"
PAYLOAD_TOO_LARGE = "Payload too large"
ACTIVITY_BAD_FILTER = "{field} must be one of: {choices}"
VALIDATION_FAILED = "Validation Failed"
BAD_JSON = "Problems parsing JSON"
UNPROCESSABLE = "Unprocessable Entity"
CONFLICT = "Conflict"
NOT_SUPPLIED = "Invalid request.\n\n\"{field}\" wasn't supplied."
NOT_A_STRING = "Invalid request.\n\nFor 'properties/{field}', {value} is not a string."
NO_COMMIT_FOUND = "No commit found for SHA: {sha}"

# The git transport.
REPOSITORY_NOT_FOUND = "Repository not found."
PUSH_DENIED = "Permission to {repo}.git denied to {login}."
# GitHub's pre-receive refusal of a push to a branch whose protection requires pull requests.
PROTECTED_BRANCH_DECLINED = "protected branch hook declined"
PROTECTED_BRANCH_FAILED = "error: GH006: Protected branch update failed for {ref}."
PROTECTED_BRANCH_NEEDS_PULL = "error: Changes must be made through a pull request."
UNSUPPORTED_ENCODING = "Unsupported Content-Encoding: {encoding}"
NOT_DECOMPRESSED = "The request body could not be decompressed"
REQUEST_TOO_LARGE = "Request body too large"

# Apps and their tokens.
JWT_UNREADABLE = "A JSON web token could not be decoded"
INTEGRATION_NOT_FOUND = "Integration not found: {app_id}"
JWT_EXPIRED = (
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the "
    "assertion expires"
)
JWT_TOO_LONG = "'Expiration time' claim ('exp') is too far in the future"

# Who may do what.
PUSH_NEEDED = "Must have push access to repository."

# Refusals when branch protection blocks a merge.
REVIEW_REQUIRED_ONE = "At least 1 approving review is required by reviewers with write access."
REVIEW_REQUIRED_MANY = "At least {count} approving reviews are required by reviewers with write access."
CHANGES_REQUESTED = "Changes have been requested."
STATUS_EXPECTED_ONE = 'Required status check "{context}" is expected.'
STATUS_EXPECTED_MANY = "{missing} of {total} required status checks are expected."
STATUS_FAILING_ONE = 'Required status check "{context}" is failing.'
STATUS_FAILING_MANY = "{failing} of {total} required status checks are failing."
HEAD_OUT_OF_DATE = "Head branch is out of date. Review and try the merge again."

# GitHub's zen, as its ping events quote it.
ZEN = ("Design for failure.", "Keep it logically awesome.", "Speak like a human.", "Practicality beats purity.",
       "Approachable is better than simple.", "Mind your words, they are important.",
       "Avoid administrative distraction.", "Non-blocking is better than blocking.", "Encourage flow.",
       "Favor focus over features.", "Half measures are as bad as nothing at all.",
       "Anything added dilutes everything else.", "It's not fully shipped until it's fast.",
       "Responsive is better than fast.")

# Refs, commits, trees and contents.
REF_EXISTS = "Reference already exists"
REF_MISSING = "Reference does not exist"
REF_INVALID = "Reference update failed"
OBJECT_MISSING = "Object does not exist"
NOT_FAST_FORWARD = "Update is not a fast forward"
DEFAULT_BRANCH_DELETE = "Cannot delete the default branch"
NO_COMMIT_FOR_REF = "No commit found for the ref {ref}"
EMPTY_REPOSITORY = "Git Repository is empty."
EMPTY_CONTENTS = "This repository is empty."
BRANCH_NOT_FOUND = "Branch not found"
BRANCH_NAMED_NOT_FOUND = "Branch {branch} not found"
NO_COMMON_ANCESTOR = "No common ancestor between {base} and {head}."
NOT_BASE64 = "content is not valid Base64"
FILE_MISMATCH = "{path} does not match {sha}"
PATH_IS_DIRECTORY = "{path} is a directory"

# Webhooks.
HOOK_EXISTS = "Hook already exists on this repository"
NEEDS_URL = "Config must contain URL for webhooks"

# Labels and comments.
LABEL_NOT_FOUND = "Label does not exist"
NEEDS_TRIAGE = "Must have triage access to repository."
CANNOT_CREATE_LABELS = "You do not have permission to create labels on this repository."

# Pull requests.
MERGED = "Pull Request successfully merged"
NOT_MERGEABLE = "Pull Request is not mergeable"
STILL_DRAFT = "Pull Request is still a draft"
CANNOT_REBASE = "This branch can't be rebased"
BASE_MODIFIED = "Base branch was modified. Review and try the merge again."
HEAD_MODIFIED = "Head branch was modified. Review and try the merge again."
ALREADY_EXISTS = "A pull request already exists for {label}."
NO_COMMITS = "No commits between {base} and {head}"
NOT_ONE_OF = "Invalid request.\n\nFor 'properties/{field}', {value} is not one of {choices}."
UPDATING_BRANCH = "Updating pull request branch."
NO_NEW_BASE_COMMITS = "There are no new commits on the base branch."
UPDATE_CONFLICT = "merge conflict between base and head"
EXPECTED_HEAD_MISMATCH = "expected_head_sha does not match the pull request's HEAD."
UPDATE_CLOSED = "Cannot update a closed pull request."
BASE_OF_CLOSED = "Cannot change the base branch of a closed pull request."
REOPEN_MERGED = "state cannot be changed. The pull request has been merged."
REOPEN_DELETED = "state cannot be changed. The head branch was deleted."

# Repositories and collaborators.
REPOSITORY_NOT_CREATED = "Repository creation failed."
NEEDS_ADMIN = "Must have admin rights to Repository."
COLLABORATORS_NEED_PUSH = "Must have push access to view repository collaborators."
PERMISSION_NEEDS_PUSH = "Must have push access to view collaborator permission."

# Reviews (GitHub answers these in its GraphQL wording).
OWN_APPROVE = "Can not approve your own pull request"
OWN_REQUEST_CHANGES = "Can not request changes on your own pull request"
NEEDS_BODY = "You need to leave a comment indicating the requested changes."
BAD_EVENT = "Variable $event of type PullRequestReviewEvent was provided invalid value"
BAD_BODY = "Variable $body of type String was provided invalid value"
BAD_COMMIT = "Variable $commitOID of type GitObjectID was provided invalid value"

# Commit statuses.
BAD_STATE = "state is not included in the list"
BAD_SHA = "sha must be a 40 character SHA1"

# A webhook delivery's status text: GitHub's for real outcomes, localhub's for the `drop` mode.
DELIVERY_OK = "OK"
DELIVERY_PENDING = "pending"
DELIVERY_HTTP = "Invalid HTTP Response: {code}"
DELIVERY_TIMEOUT = "timed out"
DELIVERY_NO_CONNECTION = "failed to connect to host"
DELIVERY_DROPPED = "dropped by localhub (delivery mode drop)"
DELIVERY_BAD_MODE = "mode must be one of: normal, drop, duplicate, reverse"
