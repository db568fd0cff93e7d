"""What a session's hooks keep between calls: the HEAD it was last shown, its transcript's path and
the last message whose dream triggers were handed on, in one small JSON file per session under the
memory's git folder (`.git/memrepo/claude-code/<session>.json`; each harness has its own folder).
Also how the hook is started again as the detached `triggers` process.

The hook, the end of a turn and the transcript reader all read this file; it imports only the
standard library and the ref reader, so the quiet prompt's path stays small.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from bot.memfs.store import refs  # a leaf, not the door: see bot/claude_code/hook.py

HOOK_MODULE = "bot.claude_code.hook"
TRIGGERS = "triggers"  # not Claude Code's: the detached process that hands trigger events to dreams
STATE_DIR = ("memrepo", "claude-code")
_SAFE = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def state_file(root: Path, session: str, folder: tuple[str, ...] = STATE_DIR) -> Path | None:
    """Where this session's last seen HEAD is kept (under `folder` of the git directory: each
    harness has its own), or None when `root` is no repository."""
    dirs = refs.git_dirs(root)
    if dirs is None:
        return None
    name = session if _SAFE.fullmatch(session) and not session.startswith(".") else \
        hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()
    return dirs[0].joinpath(*folder, f"{name}.json")


def _state(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def seen(path: Path | None) -> str | None:
    """The HEAD this session was last shown."""
    return seen_fact(path, "head")


def seen_fact(path: Path | None, key: str) -> str | None:
    """A fact kept for this session: `transcript` (its file, as a hook was told it), `counted`
    (the last transcript message whose trigger events were handed on)."""
    value = _state(path).get(key)
    return value if isinstance(value, str) else None


def remember(path: Path | None, **facts: str) -> None:
    """Keep what this session saw (`head`) and where its transcript is (`transcript`), beside
    what was kept before; written whole, then renamed into place."""
    if path is None:
        return
    state = {**_state(path), **facts}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(state), encoding="utf-8")
    os.replace(temporary, path)
