"""What the head events say: a head event that does not read, and the agent's subscriber,
which says which token to follow with when the event stream refuses it."""

from __future__ import annotations

# The agent's side (follower.py): a refusal says which token to follow with.
SUBSCRIBER_REFUSED = ("the event stream at {url} refused this agent's token ({status}): follow with the forge token "
                      "of the memory's clone, one that can read the repository ({envs}, or the token in origin's "
                      "URL); retrying every {seconds:g}s")
SUBSCRIBER_NO_TOKEN = ("the event stream at {url} needs this agent's forge token ({status}) and the clone has none: "
                       "set {envs}, or give origin's URL the token (https://x-access-token:TOKEN@...); retrying every "
                       "{seconds:g}s")
SUBSCRIBER_NOT_FOUND = ("the event stream at {url} does not serve this repository, or this agent's forge token "
                        "cannot read it (404): the receiver must serve it (MEMREPO_REPOS) and the forge token of the "
                        "memory's clone must be able to read it; retrying every {seconds:g}s")
SUBSCRIBER_BAD_URL = "the event stream URL must look like http(s)://host/v1/repos/<owner>/<repo>/events, found {url}"
SUBSCRIBER_STATUS = "the event stream at {url} answered HTTP {status}"
SUBSCRIBER_DROPPED = "the event stream at {url} dropped: {error}"
SUBSCRIBER_EVENT_TOO_LONG = ("ignored an event from {url} with a line or data longer than {limit} characters "
                             "(a head event is under 1 KB): skipped without reading it whole")
SUBSCRIBER_BAD_EVENT = "ignored a head event that is not valid: {error}"
SUBSCRIBER_SYNC_FAILED = "could not bring {path} up to date with its remote: {reason}"
SUBSCRIBER_CALLBACK_FAILED = "the on_head callback failed: {error}"
SUBSCRIBER_BAD_ATTEMPT = "attempt must be >= 0"

# A head event that does not read (events.py, the contract both sides import).
HEAD_EVENT_BAD = "not a valid head event: {problem}"
HEAD_EVENT_REPO = "'repo' must be owner/name, found {value!r}"
HEAD_EVENT_SHA = "'{name}' must be a full commit sha (40 or 64 lower-case hex digits), found {value!r}"
HEAD_EVENT_CAUSE = "'cause' must be merge or push, found {value!r}"
HEAD_EVENT_PR = "'pr' must be a pull request number or null, found {value!r}"
HEAD_EVENT_MERGE_PR = "a merge names its pull request: 'pr' must not be null when 'cause' is merge"
HEAD_EVENT_DREAM = "'dream_id' must be a dream id (YYYYMMDDTHHMMSSZ-<8 hex>) or null, found {value!r}"
HEAD_EVENT_AT = "'at' must be an ISO 8601 time with a time zone, found {value!r}"
HEAD_EVENT_NOT_OBJECT = "expected a JSON object, found {kind}"
HEAD_EVENT_MISSING = "missing {keys}"
HEAD_EVENT_NOT_JSON = "not JSON ({error})"
