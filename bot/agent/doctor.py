"""`/doctor`: how memory stands against its limits, as pure functions over the files at HEAD.

Reports the size of core memory (`system/`, or v2's root files) against `limits.core_chars`, the largest core
blocks, files over (or within 10% of) `limits.file_chars`, memory documents without a
description (the prompt's tree shows descriptions, so a file without one is hard to find; a
MEMORY.md index outside core memory is a list, not a document, and needs none),
commits not yet pushed, backups that sync set aside, and the event stream's state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.config import Limits
from bot.memfs import document, layout, validate
from bot.texts import Text

# /doctor (doctor.py).
AGENT_DOCTOR_CORE = "core memory (system/): {chars:,} of {limit:,} characters ({percent}%)"
AGENT_DOCTOR_BLOCK = "  {path}: {chars:,} characters ({percent}% of the file limit)"
AGENT_DOCTOR_OVER = "over the file limit: {path} has {chars:,} characters, the limit is {limit:,}; shorten it " \
                    "or move parts out of it"
AGENT_DOCTOR_NEAR = "close to the file limit: {path} has {chars:,} of {limit:,} characters"
AGENT_DOCTOR_UNDESCRIBED = Text(
    "{count:|file|files} without a description (the prompt's tree shows descriptions): {paths}"
)
AGENT_DOCTOR_PENDING = Text(
    "{count:|commit|commits} not pushed yet (they go with the next push or /memory-repository sync)"
)
AGENT_DOCTOR_BACKUPS = "commits set aside by a conflicting sync (see them with git log): {refs}"

LARGEST = 5
NEAR = 0.9  # a file at 90% of its limit is reported as close to it


@dataclass(frozen=True)
class DoctorReport:
    core_chars: int
    core_limit: int
    file_limit: int
    largest: tuple[tuple[str, int], ...]
    over: tuple[tuple[str, int], ...]
    near: tuple[tuple[str, int], ...]
    undescribed: tuple[str, ...]
    pending: int | None
    backups: tuple[str, ...]
    stream: str | None

    @property
    def healthy(self) -> bool:
        return not (self.over or self.undescribed or self.pending or self.backups
                    or self.core_chars > self.core_limit)


def _chars(data: bytes) -> int:
    text, _ = validate.decode(data)
    return len(text) if text is not None else len(data)


def diagnose(files: Mapping[str, bytes], limits: Limits, *, pending: int | None = None,
             backups: Sequence[str] = (), stream: str | None = None) -> DoctorReport:
    """The report for `files` (path -> bytes at HEAD) under `limits`."""
    kind = layout.of(files)
    core = {p: _chars(d) for p, d in files.items() if layout.is_core_file(p, kind)}
    docs = {p: d for p, d in files.items() if validate.is_memory_document(p) and not (kind == layout.V2 and
                                                                                    layout.is_index(p))}
    sizes = {p: _chars(d) for p, d in docs.items()}
    largest = tuple(sorted(core.items(), key=lambda item: (-item[1], item[0]))[:LARGEST])
    over = tuple(sorted((p, n) for p, n in sizes.items() if n > limits.file_chars))
    near = tuple(sorted((p, n) for p, n in sizes.items() if NEAR * limits.file_chars <= n <= limits.file_chars))
    undescribed = []
    for path, data in sorted(docs.items()):
        if _index(path, kind):
            continue
        text, _ = validate.decode(data)
        doc = document.try_parse(text) if text is not None else None
        if doc is None or not doc.description:
            undescribed.append(path)
    return DoctorReport(sum(core.values()), limits.core_chars, limits.file_chars, largest, over, near,
                        tuple(undescribed), pending, tuple(backups), stream)


def _index(path: str, kind: str) -> bool:
    """A MEMORY.md index outside core memory: a list of a folder's files, which holds no
    frontmatter (v2's indexes, Claude Code's auto memory), so it is not asked for a description."""
    return layout.is_index(path) and not layout.is_core(path, kind)


def _percent(part: int, whole: int) -> int:
    return round(100 * part / whole) if whole else 0


def render(report: DoctorReport) -> str:
    """The report as lines for a person."""
    lines = [AGENT_DOCTOR_CORE.format(chars=report.core_chars, limit=report.core_limit,
                                            percent=_percent(report.core_chars, report.core_limit))]
    if report.largest:
        lines.append("largest blocks:")
        lines += [AGENT_DOCTOR_BLOCK.format(path=p, chars=n, percent=_percent(n, report.file_limit))
                  for p, n in report.largest]
    for path, chars in report.over:
        lines.append(AGENT_DOCTOR_OVER.format(path=path, chars=chars, limit=report.file_limit))
    for path, chars in report.near:
        lines.append(AGENT_DOCTOR_NEAR.format(path=path, chars=chars, limit=report.file_limit))
    if report.undescribed:
        lines.append(AGENT_DOCTOR_UNDESCRIBED.format(count=len(report.undescribed),
                                                           paths=", ".join(report.undescribed)))
    else:
        lines.append("every memory file has a description")
    if report.pending is None:
        lines.append("no remote: memory lives only in this clone (connect one with /memory-repository set <url>)")
    elif report.pending:
        lines.append(AGENT_DOCTOR_PENDING.format(count=report.pending))
    else:
        lines.append("nothing waiting to be pushed")
    if report.backups:
        lines.append(AGENT_DOCTOR_BACKUPS.format(refs=", ".join(report.backups)))
    if report.stream is not None:
        lines.append(f"event stream: {report.stream}")
    lines.append("memory is healthy" if report.healthy else "memory needs attention (see above)")
    return "\n".join(lines)
