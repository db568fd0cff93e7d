"""`memrepo follow --transcripts`: Letta Code's transcripts into the transcript store as they
grow, and the dreams their new rows trigger, so a Letta agent's conversations dream into its
memory with nothing else running (bot/dream/events.py imports, incrementally, and hands the
new rows' step and compaction events to the memory's dream triggers).

The follower imports when Letta writes: when a transcript's size or time changed (looked at
every tick, a stat per conversation), when Letta committed or a head event came (a pass ran),
and at each poll."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Importer(Protocol):
    """Imports what is new (the lines to say), and says when there may be something new."""

    def __call__(self) -> list[str]: ...

    def stamp(self) -> object: ...


class LettaImporter:
    """An importer of the Letta transcripts under `root` (None: Letta Code's own root) into the
    store at `home` (None: memrepo's default), whose new rows count towards the dreams of the
    memory at `repo`. A folder with no conversation yet imports nothing and says nothing; a bad
    line raises MemrepoError, naming it, and imports nothing."""

    def __init__(self, root: str | None, home: str | None, repo: Path) -> None:
        from bot.transcript.letta_import import default_root

        self.root = root or str(default_root())
        self.home = home
        self.repo = repo

    def stamp(self) -> object:
        from bot.transcript.letta_import import stamp

        return stamp(self.root)

    def __call__(self) -> list[str]:
        from bot.dream.events import fire, import_letta
        from bot.memfs import MemoryRepo

        imported = import_letta(self.home, self.root)
        if imported.written:
            fire(MemoryRepo.open(self.repo), imported, self.home)
        return imported.lines


def letta_importer(root: str | None, home: str | None, repo: Path) -> LettaImporter:
    """The importer `follow --transcripts [DIR]` runs (see LettaImporter)."""
    return LettaImporter(root, home, repo)
