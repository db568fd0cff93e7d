"""`memory_why` and `memory_at`: the history API of bot/memfs/history/travel.py and
bot/provenance/why.py as tool results (the text a model reads, and the report itself as
structured content)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.memfs import at as memory_at
from bot.memfs import parse_when
from bot.provenance import why as provenance

# memory_at (past.py).
MCP_AT_HEADER = "Memory at {when}: commit {commit} of {committed_at} by {author} ({role}): {summary}{latest}"


def why(root: Path, path: str, line: int | None, *, transcripts: Any = None) -> tuple[str, dict[str, Any]]:
    """Where `path` (or its line `line`) came from."""
    report = provenance.why(root, path, line, transcripts=transcripts)
    return provenance.render_why(report), report


def at(root: Path, when: str, path: str | None) -> tuple[str, dict[str, Any]]:
    """Memory, or the file `path`, as main held it at the moment `when` names."""
    report = memory_at(root, parse_when(when), path)
    return render_at(report), report


def render_at(report: dict[str, Any]) -> str:
    """The report of `at` as text: which commit, then the file's text or the files."""
    head = MCP_AT_HEADER.format(
        when=report["when"], commit=report["commit"][:12], committed_at=report["committed_at"],
        author=report["author"]["name"], role=report["role"], summary=report["summary"],
        latest=" (still the latest)" if report.get("latest") else "")
    if report.get("path") is not None:
        return head + "\n" + "{path} as it was then:".format(path=report["path"]) + "\n" + report.get("text", "")
    lines = ["{path} ({size:,} bytes){description}".format(path=f["path"], size=f["size"],
                                           description=f" — {f['description']}" if f["description"] else "")
             for f in report.get("files", [])]
    return "\n".join([head, *lines])
