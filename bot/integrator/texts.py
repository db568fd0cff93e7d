"""What the integrator says: why it chose an action (its logs and the CLI), the commit statuses
and comments a person reads on a pull request, its resolution commits, and its jobs' problems."""

from __future__ import annotations

INTEGRATOR_WHY_CONFLICT_CLOSE = "conflicts with its base under merge: auto: close (cursor stays; a later dream retries)"



# Pull request comments.
INTEGRATOR_MORE = "- ... and {count} more"


INTEGRATOR_GIT_FAILED = "git {what} for {repo} failed: {problem}"

