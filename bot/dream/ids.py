"""Dream ids and branch names (DESIGN.md §9): `<dream-id>` = `YYYYMMDDTHHMMSSZ-<8 hex>` (UTC),
branch `memrepo/dream/<dream-id>`. The time makes ids sort by when a dream ran; the random
part keeps two dreams started in the same second apart."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

BRANCH_PREFIX = "memrepo/dream/"
LABEL = "memrepo:dream"
DREAM_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}$")


def new_dream_id(now: datetime | None = None, random_hex: str | None = None) -> str:
    """A fresh dream id; `now` and `random_hex` are injectable so tests can pin them."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    tail = secrets.token_hex(4) if random_hex is None else random_hex
    dream_id = f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{tail}"
    if not is_dream_id(dream_id):
        raise ValueError(f"not a dream id: {dream_id!r}")
    return dream_id


def is_dream_id(value: object) -> bool:
    """True for a well-formed dream id whose timestamp is a real UTC moment."""
    if not isinstance(value, str) or not DREAM_ID.match(value):
        return False
    try:
        datetime.strptime(value[:16], "%Y%m%dT%H%M%SZ")
    except ValueError:
        return False
    return True


def branch_name(dream_id: str) -> str:
    if not is_dream_id(dream_id):
        raise ValueError(f"not a dream id: {dream_id!r}")
    return BRANCH_PREFIX + dream_id


def dream_id_of_branch(branch: str) -> str | None:
    """The dream id a branch name (`memrepo/dream/<id>`, `refs/heads/...` allowed) carries."""
    name = branch.removeprefix("refs/heads/")
    if not name.startswith(BRANCH_PREFIX):
        return None
    candidate = name[len(BRANCH_PREFIX):]
    return candidate if is_dream_id(candidate) else None
