"""Claude Code's session files into the transcript store, incrementally (`memrepo transcript
import --from claude-code`, and `import_claude_code` for the hooks and the MCP server that serve
a Claude Code session).

PATH is one session (`<session-id>.jsonl`, with its subagents' files in
`<session-id>/subagents/`), a project's folder of sessions, or the projects folder holding
those; without PATH it is Claude Code's own: $CLAUDE_CONFIG_DIR/projects, else
~/.claude/projects. Every session is recorded for one memrepo agent (the memory's), its
conversation id being the session id. How rows become messages: `bot.transcript.claude_code`.

Incremental (bot.transcript.incremental): a cursor per session at
`<home>/imports/claude-code/<agent>/<session>.json`; messages keep Claude's uuids, so nothing is
imported twice. All or nothing: every session is read and checked before anything is written,
and cursors move only after the store has the messages; imports run one at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.texts import Text
from bot.transcript import home as homes
from bot.transcript import incremental, log, texts
from bot.transcript.claude_code import read_session
from bot.transcript.import_rows import invalid_import
from bot.transcript.model import Message, format_time
from bot.transcript.store import TranscriptStore

# `memrepo transcript import --from claude-code` (claude_code.py, claude_code_import.py).
CLAUDE_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Claude Code session|Claude Code sessions} in "
    "{path} for agent {agent}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
CLAUDE_SKIPPED = Text("; {count:|row|rows} of Claude Code's own skipped")
CLAUDE_PLACES = (
    "name a Claude Code session (<session-id>.jsonl), a project's folder of sessions or the projects folder "
    "(default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)"
)
CLAUDE_SESSION_NAME = "{path}: a session's file is named <session-id>.jsonl, and {problem}"
REWRITTEN = (
    "{transcript} changed since the last import: it was read again from the start, and only messages memrepo "
    "did not have were imported"
)
CLAUDE_NOT_FOUND = "{path} does not exist; " + CLAUDE_PLACES
CLAUDE_NONE = "no Claude Code sessions in {path}; " + CLAUDE_PLACES

SUFFIX = ".jsonl"
SUBAGENTS = "subagents"
CONFIG_ENV = "CLAUDE_CONFIG_DIR"


@dataclass
class ImportReport:
    """What an import of a harness's sessions did: sessions read, messages new to the store,
    messages it already had, rows of the harness's own skipped, and notes for a person. `done`
    and `skipped_text` say it in the harness's words (Claude Code's by default)."""

    agent_id: str
    done: Text = field(default=CLAUDE_IMPORT_DONE, repr=False, compare=False)
    skipped_text: Text = field(default=CLAUDE_SKIPPED, repr=False, compare=False)
    conversations: int = 0
    imported: int = 0
    duplicates: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)

    def describe(self, path: str | os.PathLike[str]) -> str:
        skipped = self.skipped_text.format(count=self.skipped) if self.skipped else ""
        return self.done.format(imported=self.imported, conversations=self.conversations, path=path,
                                agent=self.agent_id, duplicates=self.duplicates, skipped=skipped)


@dataclass(frozen=True)
class Part:
    """One file of a harness's sessions to import: where its cursor is kept, and how its new
    lines are read (`read(lines, imported_at, start)`, a reading with messages, problems and
    skipped rows)."""

    file: Path
    cursor: Path
    read: Callable[[Sequence[bytes], str, int], Any]


def import_parts(store: TranscriptStore, where: Path, parts: Sequence[Part], report: ImportReport) -> ImportReport:
    """Every part's new lines read and checked, then written to `store` at once and the cursors
    moved: all or nothing (a bad line imports nothing, and no cursor moves)."""
    problems: list[str] = []
    stamp = format_time(store.clock())
    moved: list[tuple[Path, incremental.Cursor]] = []
    found: list[Message] = []
    for part in parts:
        before = incremental.load_cursor(part.cursor)
        read = incremental.read(part.file, before)
        if read.status in (incremental.SHRANK, incremental.CHANGED) and before is not None:
            report.notes.append(REWRITTEN.format(transcript=part.file))
        reading = part.read(read.lines, stamp, read.start)
        problems.extend(f"{part.file} {problem}" for problem in reading.problems)
        report.skipped += sum(reading.skipped.values())
        found.extend(reading.messages)
        moved.append((part.cursor, read.after))
    if problems:
        raise invalid_import(str(where), problems, texts.HARNESS_IMPORT_INVALID)
    written = store.import_messages(found)
    for at, after in moved:
        incremental.save_cursor(at, after)
    report.imported, report.duplicates = written.imported, written.duplicates
    return report


def default_root(env: Mapping[str, str] | None = None) -> Path:
    """Where Claude Code keeps its sessions: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    value = (os.environ if env is None else env).get(CONFIG_ENV, "").strip()
    return (Path(value).expanduser() if value else Path.home() / ".claude") / "projects"


def session_files(path: Path) -> list[Path]:
    """The session files PATH stands for (see the module's docstring), sorted."""
    if path.is_file():
        return [path]
    found = sorted(path.glob(f"*{SUFFIX}"))
    return found or sorted(path.glob(f"*/*{SUFFIX}"))


def session_id(path: Path) -> str:
    """The session (and conversation) id a session file is named for."""
    try:
        return check_id(path.name.removesuffix(SUFFIX), "conversation_id")
    except MemrepoError as exc:
        raise MemrepoError(CLAUDE_SESSION_NAME.format(path=path, problem=exc)) from None


def subagent_files(session_file: Path) -> list[Path]:
    """A session's subagents' files (`<session-id>/subagents/**/agent-<id>.jsonl` beside it), sorted."""
    folder = session_file.with_suffix("") / SUBAGENTS
    return sorted(folder.rglob(f"agent-*{SUFFIX}")) if folder.is_dir() else []


def cursor_path(home: Path, agent_id: str, session: str, subagent: str | None = None) -> Path:
    name = f"{session}.json" if subagent is None else f"{session}/{subagent}.json"
    return homes.claude_code_cursors(home) / agent_id / name


def import_claude_code(store: TranscriptStore, agent_id: str,
                       path: str | os.PathLike[str] | None = None) -> ImportReport:
    """Import the Claude Code sessions at `path` (default: Claude Code's own) into `store` as
    `agent_id`'s: only what is new since the last import, all or nothing. Cheap to call again
    and again (every write and every turn's end does): an unchanged session costs one read."""
    where = Path(path).expanduser() if path is not None and str(path) else default_root()
    check_id(agent_id, "agent_id")
    if not where.exists():
        raise MemrepoError(CLAUDE_NOT_FOUND.format(path=where))
    files = session_files(where)
    if not files:
        raise MemrepoError(CLAUDE_NONE.format(path=where))
    with log.locked(homes.claude_code_cursors(store.home)):
        return _import(store, agent_id, where, files)


def _import(store: TranscriptStore, agent_id: str, where: Path, files: list[Path]) -> ImportReport:
    parts: list[Part] = []
    for file in files:
        session = session_id(file)
        for part, subagent in [(file, None), *((sub, sub.stem) for sub in subagent_files(file))]:
            parts.append(Part(part, cursor_path(store.home, agent_id, session, subagent),
                              partial(read_session, agent_id, session, sidechain=subagent is not None)))
    return import_parts(store, where, parts, ImportReport(agent_id, conversations=len(files)))
