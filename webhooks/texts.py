"""What the receiver answers: to GitHub's webhooks (refused, ignored and why, accepted), and to
an agent that opens the event stream (its access check against the forge). An answer says what
to fix, since the one who reads it is an operator setting up a webhook or a token."""

from __future__ import annotations

# GitHub's webhooks (intake/).
WEBHOOK_TOO_LARGE = "the body is larger than {limit:,} bytes, GitHub's limit for a webhook payload"
REDIS_UNAVAILABLE = "Redis is not reachable ({error}); nothing was done, try again shortly"


