"""`memrepo follow --transcripts`: Letta Code's transcripts into the transcript store as they
grow, so a dream over a Letta agent's conversations has them (bot.transcript.letta_import does
the importing, incrementally: an unchanged transcript costs one read)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

Importer = Callable[[], list[str]]  # imports what is new; the lines to say


def letta_importer(root: str | None, home: str | None) -> Importer:
    """An importer of the Letta transcripts under `root` (None: Letta Code's own root) into the
    store at `home` (None: memrepo's default). A folder with no conversation yet imports
    nothing and says nothing; a bad line raises MemrepoError, naming it, and imports nothing."""
    from bot.transcript import TranscriptStore, TranscriptWarning
    from bot.transcript.letta_import import default_root, import_letta

    path = root or default_root()

    def run() -> list[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TranscriptWarning)
            with TranscriptStore(home) as store:
                report = import_letta(store, path)
        said = [*store.warnings, *report.notes]
        return [*said, report.describe(path)] if report.imported else said

    return run
