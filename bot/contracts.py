"""The names several writers share (DESIGN.md §9): labels, branch prefixes, the status
context, commit trailer keys and dream ids.

The agent, the dreamer, the integrator, CI and `memrepo why` all read and write these, so they
live here, below every one of them, and nowhere else: a writer that spells a label or a
trailer its own way would split the audit trail without anyone noticing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

# Labels on memory pull requests.
LABEL_PREFIX = "memrepo:"
LABEL_DREAM = "memrepo:dream"
LABEL_AGENT_EDIT = "memrepo:agent-edit"
LABEL_UNTRUSTED = "memrepo:untrusted"
LABEL_CONFLICT = "memrepo:conflict"
LABEL_NEEDS_REVIEW = "memrepo:needs-review"

# Branches: `memrepo/dream/<dream-id>` and `memrepo/edit/<agent-id>/<short id>`.
DREAM_BRANCH_PREFIX = "memrepo/dream/"
EDIT_BRANCH_PREFIX = "memrepo/edit/"

# The commit status the integrator and the memory repository's CI set.
STATUS_CONTEXT = "memrepo/validate"

# Commit trailers.
DREAM_ID = "Dream-ID"
AGENT_ID = "Agent-ID"
CONVERSATION_ID = "Conversation-ID"
TRANSCRIPT_RANGE = "Transcript-Range"  # `<first message id>..<last message id>`
BASE_COMMIT = "Base-Commit"
SOURCE = "Source"  # one per untrusted source: `Source: external:<what>`
EXTERNAL_PREFIX = "external:"
PROVENANCE_TRAILERS = (DREAM_ID, AGENT_ID, CONVERSATION_ID, TRANSCRIPT_RANGE, BASE_COMMIT)

# Dream ids: `YYYYMMDDTHHMMSSZ-<8 hex>` (UTC). The time makes ids sort by when a dream ran; the
# random part keeps two dreams started in the same second apart.
DREAM_ID_PATTERN = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}$")


def new_dream_id(now: datetime | None = None, random_hex: str | None = None) -> str:
    """A fresh dream id; `now` and `random_hex` are injectable so tests can pin them. `secrets`
    (hashlib, hmac, random) is imported here, not by every writer that only needs a name."""
    import secrets

    moment = (now or datetime.now(UTC)).astimezone(UTC)
    tail = secrets.token_hex(4) if random_hex is None else random_hex
    dream_id = f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{tail}"
    if not is_dream_id(dream_id):
        raise ValueError(f"not a dream id: {dream_id!r}")
    return dream_id


def is_dream_id(value: object) -> bool:
    """True for a well-formed dream id whose timestamp is a real UTC moment."""
    if not isinstance(value, str) or not DREAM_ID_PATTERN.match(value):
        return False
    try:
        datetime.strptime(value[:16], "%Y%m%dT%H%M%SZ")
    except ValueError:
        return False
    return True


def dream_branch(dream_id: str) -> str:
    if not is_dream_id(dream_id):
        raise ValueError(f"not a dream id: {dream_id!r}")
    return DREAM_BRANCH_PREFIX + dream_id


def dream_id_of_branch(branch: str) -> str | None:
    """The dream id a branch name (`memrepo/dream/<id>`, `refs/heads/...` allowed) carries."""
    name = branch.removeprefix("refs/heads/")
    if not name.startswith(DREAM_BRANCH_PREFIX):
        return None
    candidate = name[len(DREAM_BRANCH_PREFIX):]
    return candidate if is_dream_id(candidate) else None
