"""The names several writers share (docs/architecture.md §5.1, §5.2): labels, branch prefixes, the status
context, commit trailer keys and dream ids.

The agent, the dreamer, the integrator, CI and `memrepo why` all read and write these, so they
live here, below every one of them, and nowhere else: a writer that spells a label or a
trailer its own way would split the audit trail without anyone noticing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TypeGuard

from bot.errors import MemrepoError

# Ids (bot/contracts.py): an id names a file, so it is checked before anything is stored.
TRANSCRIPT_ID_TYPE = "{field} must be text, found {kind}"
TRANSCRIPT_ID_BAD = (
    "{field} {value!a} is not valid: use 1-{limit} ASCII letters, digits, '.', '_' or '-', starting "
    "with a letter or digit and without '..' (it names a file)"
)
DREAM_ID_BAD = "not a dream id: {value!r}"

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

# Every pattern below is matched with fullmatch (`$` also matches before a trailing newline) and
# spelled in ASCII classes (`\d` also matches other scripts' digits): an id is one whole string
# that reads the same on every screen.

# Agent, conversation and message ids name files, folders, branches and trailers: ASCII letters,
# digits, '.', '_' and '-', starting with a letter or digit (never '.', '..' or hidden), no '..'
# inside, so no lookalike letter, fullwidth digit or invisible character makes a second "ada".
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ID_LIMITS = {"agent_id": 64, "conversation_id": 128, "message_id": 128}

# Dream ids: `YYYYMMDDTHHMMSSZ-<8 hex>` (UTC). The time makes ids sort by when a dream ran; the
# random part keeps two dreams started in the same second apart.
DREAM_ID_PATTERN = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")

# A full git object name as git writes it: SHA-1 (40 hex digits) or SHA-256 (64), lower case.
OBJECT_NAME = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def check_id(value: object, field: str) -> str:
    """`value` when it is a well-formed `field` (agent_id, conversation_id or message_id, see
    ID_PATTERN), else a MemrepoError that spells it in ASCII, so a lookalike shows."""
    limit = ID_LIMITS[field]
    if not isinstance(value, str):
        raise MemrepoError(TRANSCRIPT_ID_TYPE.format(field=field, kind=type(value).__name__))
    if len(value) > limit or not ID_PATTERN.fullmatch(value) or ".." in value:
        raise MemrepoError(TRANSCRIPT_ID_BAD.format(field=field, value=value, limit=limit))
    return value


def is_object_name(value: object) -> TypeGuard[str]:
    """True for a full commit (or other object) name, lower case."""
    return isinstance(value, str) and OBJECT_NAME.fullmatch(value) is not None


def new_dream_id(now: datetime | None = None, random_hex: str | None = None) -> str:
    """A fresh dream id; `now` and `random_hex` are injectable so tests can pin them. `secrets`
    (hashlib, hmac, random) is imported here, not by every writer that only needs a name."""
    import secrets

    moment = (now or datetime.now(UTC)).astimezone(UTC)
    tail = secrets.token_hex(4) if random_hex is None else random_hex
    dream_id = f"{moment.strftime('%Y%m%dT%H%M%SZ')}-{tail}"
    if not is_dream_id(dream_id):
        raise ValueError(DREAM_ID_BAD.format(value=dream_id))
    return dream_id


def is_dream_id(value: object) -> bool:
    """True for a well-formed dream id whose timestamp is a real UTC moment."""
    if not isinstance(value, str) or not DREAM_ID_PATTERN.fullmatch(value):
        return False
    try:
        datetime.strptime(value[:16], "%Y%m%dT%H%M%SZ")
    except ValueError:
        return False
    return True


def dream_branch(dream_id: str) -> str:
    if not is_dream_id(dream_id):
        raise ValueError(DREAM_ID_BAD.format(value=dream_id))
    return DREAM_BRANCH_PREFIX + dream_id


def dream_id_of_branch(branch: str) -> str | None:
    """The dream id a branch name (`memrepo/dream/<id>`, `refs/heads/...` allowed) carries."""
    name = branch.removeprefix("refs/heads/")
    if not name.startswith(DREAM_BRANCH_PREFIX):
        return None
    candidate = name[len(DREAM_BRANCH_PREFIX):]
    return candidate if is_dream_id(candidate) else None
