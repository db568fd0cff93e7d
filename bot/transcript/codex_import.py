"""Codex CLI's session rollouts into the transcript store, incrementally (`memrepo transcript
import --from codex`, and `import_codex` for the hooks and the MCP server that serve a Codex
session).

PATH is one rollout (`rollout-<time>-<session-id>.jsonl`), a day's folder of them, or any folder
holding those (Codex's sessions folder: every rollout below it); without PATH it is Codex's own:
$CODEX_HOME/sessions, else ~/.codex/sessions. Every session is recorded for one memrepo agent
(the memory's), its conversation id being the session id. How rows become messages:
`bot.transcript.codex`.

Incremental (bot.transcript.incremental): a cursor per session at
`<home>/imports/codex/<agent>/<session>.json`; messages keep the rollout's item ids, so nothing
is imported twice. All or nothing: every rollout is read and checked before anything is written
(a bad line imports nothing), and cursors move only after the store has the messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.texts import Text
from bot.transcript import log
from bot.transcript.claude_code_import import ImportReport, Part, import_parts
from bot.transcript.codex import read_rollout
from bot.transcript.store import TranscriptStore

# `memrepo transcript import --from codex` (codex.py, codex_import.py).
CODEX_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Codex session|Codex sessions} in "
    "{path} for agent {agent}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
CODEX_SKIPPED = Text("; {count:|row|rows} of Codex's own skipped")
CODEX_PLACES = (
    "name a Codex rollout (rollout-<time>-<session-id>.jsonl), a day's folder or the sessions folder "
    "(default: $CODEX_HOME/sessions, else ~/.codex/sessions)"
)
CODEX_ROLLOUT_NAME = "{path}: a Codex rollout is named rollout-<time>-<session-id>.jsonl, and {problem}"
CODEX_NOT_FOUND = "{path} does not exist; " + CODEX_PLACES
CODEX_NONE = "no Codex rollouts in {path}; " + CODEX_PLACES

SUFFIX = ".jsonl"
HOME_ENV = "CODEX_HOME"
ROLLOUT = re.compile(r"rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-(?P<session>.+)\.jsonl")


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """Where Codex keeps its configuration and sessions: $CODEX_HOME, else ~/.codex."""
    value = (os.environ if env is None else env).get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else Path.home() / ".codex"


def default_root(env: Mapping[str, str] | None = None) -> Path:
    return codex_home(env) / "sessions"


def cursors(home: Path) -> Path:
    """Where `import --from codex` keeps how far each Codex session was imported."""
    return home / "imports" / "codex"


def rollout_files(path: Path) -> list[Path]:
    """The rollouts PATH stands for (see the module's docstring), sorted."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob(f"rollout-*{SUFFIX}") if p.is_file())


def session_id(path: Path) -> str:
    """The session (and conversation) id a rollout is named for."""
    named = ROLLOUT.fullmatch(path.name)
    if named is None:
        raise MemrepoError(CODEX_ROLLOUT_NAME.format(path=path, problem="this name is not one"))
    try:
        return check_id(named["session"], "conversation_id")
    except MemrepoError as exc:
        raise MemrepoError(CODEX_ROLLOUT_NAME.format(path=path, problem=exc)) from None


def import_codex(store: TranscriptStore, agent_id: str,
                 path: str | os.PathLike[str] | None = None) -> ImportReport:
    """Import the Codex rollouts at `path` (default: Codex's own) into `store` as `agent_id`'s:
    only what is new since the last import, all or nothing. Cheap to call again and again."""
    where = Path(path).expanduser() if path is not None and str(path) else default_root()
    check_id(agent_id, "agent_id")
    if not where.exists():
        raise MemrepoError(CODEX_NOT_FOUND.format(path=where))
    files = rollout_files(where)
    if not files:
        raise MemrepoError(CODEX_NONE.format(path=where))
    with log.locked(cursors(store.home)):
        return _import(store, agent_id, where, files)


def _import(store: TranscriptStore, agent_id: str, where: Path, files: list[Path]) -> ImportReport:
    parts = [Part(file, cursors(store.home) / agent_id / f"{session}.json",
                  partial(read_rollout, agent_id, session))
             for file, session in ((file, session_id(file)) for file in files)]
    return import_parts(store, where, parts, ImportReport(agent_id, CODEX_IMPORT_DONE, CODEX_SKIPPED,
                                                          conversations=len(files)))
