"""What the receiver answers: to GitHub's webhooks (refused, ignored and why, accepted), and to
an agent that opens the event stream (its access check against the forge). An answer says what
to fix, since the one who reads it is an operator setting up a webhook or a token."""

from __future__ import annotations

# GitHub's webhooks (intake/).
WEBHOOK_TOO_LARGE = "the body is larger than {limit:,} bytes, GitHub's limit for a webhook payload"
WEBHOOK_NO_SIGNATURE = "no X-Hub-Signature-256 header: give the webhook the receiver's secret"
WEBHOOK_BAD_SIGNATURE = "X-Hub-Signature-256 does not match the body: the webhook's secret is not the receiver's"
WEBHOOK_MISSING_HEADER = "no {header} header; this endpoint receives GitHub webhooks only"
WEBHOOK_BAD_HEADER = "the {header} header is not valid"
WEBHOOK_NOT_JSON = "the payload is not JSON ({error})"
WEBHOOK_NOT_OBJECT = "the payload must be a JSON object, found {kind}"
WEBHOOK_FORM_NO_PAYLOAD = "a form-encoded delivery must carry its JSON in one 'payload' field"
WEBHOOK_BAD_PAYLOAD = "the {event} payload has no valid {field}"
WEBHOOK_TOO_DEEP = ("the payload nests arrays and objects deeper than {limit} levels, which this receiver "
                    "does not parse (GitHub's own payloads nest far less)")
WEBHOOK_OUT_OF_RANGE = ("the {event} payload's {field} is out of range ({value}): GitHub's numbers and ids "
                        "are positive and below 2**63")
WEBHOOK_PONG = "pong: memrepo's webhook receiver is listening"
WEBHOOK_ACCEPTED = "accepted"
WEBHOOK_DUPLICATE = "duplicate delivery {delivery}: it was accepted before, so nothing is enqueued again"
WEBHOOK_IGNORED_EVENT = "ignored: memrepo does not act on {event} events"
WEBHOOK_IGNORED_ACTION = "ignored: memrepo does not act on {event} events with action {action}"
WEBHOOK_IGNORED_NO_REPO = "ignored: this {event} event is not about one repository"
WEBHOOK_IGNORED_REPO = "ignored: {repo} is not one of the repositories this receiver serves (MEMREPO_REPOS)"
WEBHOOK_IGNORED_OWN = "ignored: this {event} event was caused by the integrator itself ({login})"
WEBHOOK_IGNORED_BRANCH = "ignored: a push to {ref}, not to the default branch {branch}"
WEBHOOK_IGNORED_DELETED = "ignored: the default branch {branch} was deleted"
WEBHOOK_IGNORED_NOT_PULL = "ignored: a comment on an issue, not on a pull request"
REDIS_UNAVAILABLE = "Redis is not reachable ({error}); nothing was done, try again shortly"
HEALTH_OK = "ok"

# The receiver as the server that runs it configures it (asgi.py, streams/fanout.py).
RECEIVER_BAD_THREADS = "intake_threads must be at least 1"
FANOUT_BAD_LIMITS = "buffer must be at least 1 and unsent at least 0"

# The agents' event stream (streams/endpoint.py): its access check against the forge.
EVENTS_NO_TOKEN = ("a bearer token is required: send Authorization: Bearer <your forge token> (the token the agent "
                   "uses for git)")
EVENTS_BAD_TOKEN = "the forge does not accept this token (401): send the token the agent uses for git"
EVENTS_NO_ACCESS = "{repo} is not a repository this server serves, or this token cannot read it"
EVENTS_FORGE_UNAVAILABLE = ("the forge could not be asked whether this token may read {repo} ({error}); "
                            "try again shortly")
EVENTS_METHOD = "the event stream answers GET only"
EVENTS_OPERATOR_ONLY = ("this receiver checks no forge tokens (it has no forge configured), so an agent's forge token "
                        "cannot open streams here: only the operator token does, and this is not it")
