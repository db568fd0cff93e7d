"""What `memrepo follow` says, and the follower's line in `repository status`."""

from __future__ import annotations

GUARD_CHAINED = "your pre-push hook is now {chained}; it runs after memrepo's pre-push guard ({hook})"

