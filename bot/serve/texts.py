"""What the processes of bot/serve say: `serve --local` and its children (ready, restarted, gave
up), the receiver and the worker at start, and the palace the receiver serves, whose viewers are
checked against the forge."""

from __future__ import annotations

SERVE_LOCAL_CANNOT_START = "memrepo serve --local cannot start: {problem}"




