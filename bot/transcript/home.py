"""Where transcripts and their indexes live.

HOME is `--home DIR`, else $MEMREPO_HOME, else $XDG_DATA_HOME/memrepo (an absolute
XDG_DATA_HOME only, as the XDG spec says), else ~/.local/share/memrepo. Inside it:

    transcripts/<agent>/<conversation>.jsonl    the append-only logs (the truth)
    transcripts/<agent>/<conversation>.jsonl.torn   unfinished last lines set aside
    transcripts/<agent>/.lock                   the agent's lock file
    index/<agent>.sqlite3                       the agent's search index (derived, rebuildable)
    imports/letta/<agent>/<conversation>.json   how far Letta Code's transcript was imported
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.errors import MemrepoError


def resolve(home: str | os.PathLike[str] | None = None) -> Path:
    if home is not None and str(home):
        path = Path(home).expanduser()
    elif os.environ.get("MEMREPO_HOME"):
        path = Path(os.environ["MEMREPO_HOME"]).expanduser()
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
        path = base / "memrepo"
    if path.exists() and not path.is_dir():
        raise MemrepoError(f"{path} is a file; MEMREPO_HOME or --home must be a folder")
    return path


def transcripts(home: Path) -> Path:
    return home / "transcripts"


def agent_folder(home: Path, agent_id: str) -> Path:
    return home / "transcripts" / agent_id


def log_path(home: Path, agent_id: str, conversation_id: str) -> Path:
    return home / "transcripts" / agent_id / f"{conversation_id}.jsonl"


def index_path(home: Path, agent_id: str) -> Path:
    return home / "index" / f"{agent_id}.sqlite3"


def letta_cursors(home: Path) -> Path:
    """Where `import --from letta` keeps how far each Letta conversation was imported."""
    return home / "imports" / "letta"


def claude_code_cursors(home: Path) -> Path:
    """Where `import --from claude-code` keeps how far each Claude Code session was imported."""
    return home / "imports" / "claude-code"
