"""The sentences of the agents' event stream at scale: its access check against the forge, its
fan-out, the receiver's server, and what `memrepo demo` checks of them. Kept in one place like
bot/messages.py, which they join."""

from __future__ import annotations

EVENTS_NO_TOKEN = ("a bearer token is required: send Authorization: Bearer <your forge token> (the token the agent "
                   "uses for git)")
EVENTS_BAD_TOKEN = "the forge does not accept this token (401): send the token the agent uses for git"
EVENTS_NO_ACCESS = "{repo} is not a repository this server serves, or this token cannot read it"
EVENTS_FORGE_UNAVAILABLE = ("the forge could not be asked whether this token may read {repo} ({error}); "
                            "try again shortly")
EVENTS_REDIS_DOWN = "Redis is not reachable ({error}); no stream can be followed now, try again shortly"
EVENTS_METHOD = "the event stream answers GET only"
EVENTS_OPERATOR_ONLY = ("this receiver checks no forge tokens (it has no forge configured), so an agent's forge token "
                        "cannot open streams here: only the operator token does, and this is not it")
EVENTS_STOPPING = "the receiver is stopping; reconnect"

# The agent's side (bot/notify/follower.py): a refusal says which token to follow with.
SUBSCRIBER_REFUSED = ("the event stream at {url} refused this agent's token ({status}): follow with the forge token "
                      "of the memory's clone, one that can read the repository ({envs}, or the token in origin's "
                      "URL); retrying every {seconds:g}s")
SUBSCRIBER_NO_TOKEN = ("the event stream at {url} needs this agent's forge token ({status}) and the clone has none: "
                       "set {envs}, or give origin's URL the token (https://x-access-token:TOKEN@...); retrying every "
                       "{seconds:g}s")
SUBSCRIBER_NOT_FOUND = ("the event stream at {url} does not serve this repository, or this agent's forge token "
                        "cannot read it (404): the receiver must serve it (MEMREPO_REPOS) and the forge token of the "
                        "memory's clone must be able to read it; retrying every {seconds:g}s")

DEMO_CHECK_OWN_TOKENS = ("each agent follows with its own forge token, the one its clone pushes with (the forge "
                         "knows them as {logins}), not an operator token")
DEMO_CHECK_OUTSIDER = "a forge token that may not read the private {repo} is refused its event stream (404)"

SERVE_BAD_INTAKE = "--threads must be at least 1, found {threads}"
SERVE_LOCAL_BAD_PORTS = "--port {port} leaves no room for the receiver on the next port; use 0 or a lower port"
