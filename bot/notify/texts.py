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
EVENTS_NO_ACCESS_CHECK = ("this receiver checks no forge tokens (no forge configured): only the operator token "
                          "opens streams")
EVENTS_REDIS_DOWN = "Redis is not reachable ({error}); no stream can be followed now, try again shortly"
EVENTS_METHOD = "the event stream answers GET only"
EVENTS_STOPPING = "the receiver is stopping; reconnect"

DEMO_CHECK_OWN_TOKENS = ("each agent follows with its own forge token, the one its clone pushes with (the forge "
                         "knows them as {logins}), not an operator token")
DEMO_CHECK_OUTSIDER = "a forge token that may not read the private {repo} is refused its event stream (404)"

SERVE_BAD_INTAKE = "--threads must be at least 1, found {threads}"
SERVE_LOCAL_BAD_PORTS = "--port {port} leaves no room for the receiver on the next port; use 0 or a lower port"
