"""TranscriptStore: the API the transcripts' readers and writers use (agent sessions, the dreamer,
the harnesses' imports, `why`, the palace, the command line).

Appends go to the log first (the truth), then to the index, under the agent's lock. The
first time a store touches an agent's index it catches up with the logs (rows that another
process wrote but did not index, a torn tail, a missing or outdated index file); after that
its own appends keep the index current, and other processes' appends index themselves.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.transcript import home as homes
from bot.transcript import log, snippet, texts
from bot.transcript.import_rows import checked_rows
from bot.transcript.index import Index
from bot.transcript.log import TranscriptWarning
from bot.transcript.model import (
    Message,
    MessageNotFoundError,
    build,
    check_kind,
    check_source,
    format_time,
    time_range,
)
from bot.transcript.search import Filters, top_k
from bot.transcript.tokenize import parse_query

TRANSCRIPT_INDEX_BEHIND = (
    "the row was saved, but indexing it failed ({error}); the index catches up the next time it is opened"
)
TRANSCRIPT_DUPLICATE_ID = "{log}: message {message_id} appears twice; the search index keeps the first"
TRANSCRIPT_WRITE_FAILED = (
    "cannot write to {log}: {reason}; nothing after the last complete row was saved (an unfinished "
    "row is set aside the next time the log is opened)"
)
TRANSCRIPT_INDEX_DAMAGED = "the search index {path} could not be read ({error}); it is built again from the logs"
TRANSCRIPT_INDEX_REBUILT = "the search index of agent {agent} was rebuilt from its logs ({reason})"
TRANSCRIPT_REASON_LOG_SHRANK = "the log of conversation {conversation} is shorter than what was indexed"
TRANSCRIPT_NO_AGENTS = "none yet (add a message with `memrepo transcript append`)"
TRANSCRIPT_AFTER_MISSING = (
    "message {after} is not in conversation {conversation} of agent {agent}; give the id of a "
    "message of that conversation (or no `after` to read from the start)"
)
SEARCH_BAD_SOURCE = (
    "source filter {value!r} is not valid; use user, agent, human, tool, external, "
    "tool:<name> or external:<uri>"
)

MAX_K = 1000
IMPORT_CHUNK = 1000
PROGRESS_ROWS = 2000  # rows between two progress reports while reading or indexing a log

# A store's progress hook: (task, done, total) as long work goes on, for a command to show.
# Tasks: "index" (rebuilding: bytes of logs indexed), "read" (bytes of one log read), "import"
# (rows written). done == total ends a task.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Hit(Message):
    """A search result: the message, its BM25 score (higher is better) and a snippet."""

    score: float = 0.0
    snippet: str = ""

    def to_dict(self) -> dict[str, object]:
        return {**self.to_row(), "score": self.score, "snippet": self.snippet}


@dataclass
class ImportReport:
    """What an import wrote: counts, and the messages new to the store (in order), whose
    trigger events a caller may count."""

    imported: int = 0
    duplicates: int = 0
    by_agent: dict[str, int] = field(default_factory=dict)
    written: list[Message] = field(default_factory=list)


def _now() -> datetime:
    return datetime.now(UTC)


class TranscriptStore:
    """Append-only transcripts of every agent under one home folder, with their search indexes.

    `fsync`: fsync every append (default; see log.py). `clock`: the store's clock, a function
    returning an aware datetime (tests pass a fake one). `progress`: told how long work goes
    (rebuilding an index, reading a conversation, importing), for a command's progress bar."""

    def __init__(self, home: str | os.PathLike[str] | None = None, *, fsync: bool = True,
                 clock: Callable[[], datetime] = _now, progress: Progress | None = None) -> None:
        self.home = homes.resolve(home)
        self.fsync = fsync
        self.clock = clock
        self.progress = progress
        self.warnings: list[str] = []
        self._local = threading.local()
        self._fresh: set[str] = set()
        self._fresh_lock = threading.Lock()
        self._all_indexes: list[Index] = []

    # ---------------------------------------------------------------- plumbing

    def close(self) -> None:
        for index in self._all_indexes:
            with contextlib.suppress(sqlite3.Error):
                index.close()
        self._all_indexes.clear()
        self._local = threading.local()

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        warnings.warn(text, TranscriptWarning, stacklevel=3)

    def _stamp(self) -> str:
        return format_time(self.clock())

    def _connection(self, agent_id: str) -> Index:
        """This thread's connection to the agent's index file (a damaged file is replaced)."""
        indexes: dict[str, Index] = self._local.__dict__.setdefault("indexes", {})
        index = indexes.get(agent_id)
        if index is None:
            path = homes.index_path(self.home, agent_id)
            try:
                index = Index(path)
            except sqlite3.DatabaseError as exc:
                self._discard(path, exc)
                index = Index(path)
            indexes[agent_id] = index
            self._all_indexes.append(index)
        return index

    def _discard(self, path: Path, problem: Exception) -> None:
        self._warn(TRANSCRIPT_INDEX_DAMAGED.format(path=path, error=problem))
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)

    def _index(self, agent_id: str) -> Index:
        """This thread's connection to the agent's index, caught up with the logs once."""
        index = self._connection(agent_id)
        if agent_id not in self._fresh:
            with log.locked(homes.agent_folder(self.home, agent_id)):
                index = self._catch_up_safely(agent_id, index)
            with self._fresh_lock:
                self._fresh.add(agent_id)
        return index

    def _catch_up_safely(self, agent_id: str, index: Index) -> Index:
        """Catch up; an index file SQLite cannot read is deleted and built again from the logs."""
        try:
            self._catch_up(agent_id, index)
            return index
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            index.close()
            self._discard(index.path, exc)
            self._local.__dict__.setdefault("indexes", {}).pop(agent_id, None)
            fresh = self._connection(agent_id)
            self._catch_up(agent_id, fresh)
            return fresh

    def _logs(self, agent_id: str) -> dict[str, Path]:
        folder = homes.agent_folder(self.home, agent_id)
        if not folder.is_dir():
            return {}
        return {p.name[: -len(log.SUFFIX)]: p for p in sorted(folder.iterdir())
                if p.name.endswith(log.SUFFIX) and p.is_file()}

    def _repair(self, path: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TranscriptWarning)
            torn = log.repair(path, fsync=self.fsync)
        if torn is not None:
            self._warn(torn.describe())

    def _catch_up(self, agent_id: str, index: Index) -> None:
        """Index what the logs have beyond the recorded offsets (caller holds the lock)."""
        logs = self._logs(agent_id)
        if not index.current():
            self._rebuild(agent_id, index, logs, reason=None)
            return
        offsets = index.offsets()
        for conversation in sorted(set(offsets) - set(logs)):
            reason = f"the log of conversation {conversation} is gone"
            self._rebuild(agent_id, index, logs, reason=reason)
            return
        sizes = {}
        for conversation, path in logs.items():
            self._repair(path)
            sizes[conversation] = log.complete_size(path)[1]
            if sizes[conversation] < offsets.get(conversation, 0):
                reason = TRANSCRIPT_REASON_LOG_SHRANK.format(conversation=conversation)
                self._rebuild(agent_id, index, logs, reason=reason)
                return
        behind = [c for c in logs if sizes[c] > offsets.get(c, 0)]
        if not behind:
            return
        index.begin()
        try:
            for conversation in behind:
                self._index_log(index, logs[conversation], conversation, offsets.get(conversation, 0),
                                sizes[conversation])
            index.commit()
        except BaseException:
            index.rollback()
            raise

    def _index_log(self, index: Index, path: Path, conversation: str, start: int, end: int,
                   advance: Callable[[int], None] | None = None) -> int:
        """Index the log's rows in [start, end); `advance(bytes)` is told how far it got."""
        items = ((offset, message) for offset, _, message in _tapped(log.rows(path, start, end), start, advance))
        added, skipped = index.add(items)
        index.set_offset(conversation, end)
        for message_id in skipped:
            self._warn(TRANSCRIPT_DUPLICATE_ID.format(log=path, message_id=message_id))
        return added

    def _rebuild(self, agent_id: str, index: Index, logs: dict[str, Path], reason: str | None,
                 advance: Callable[[int], None] | None = None) -> int:
        if reason is not None:
            self._warn(TRANSCRIPT_INDEX_REBUILT.format(agent=agent_id, reason=reason))
        index.begin()
        try:
            index.reset()
            index.bulk_start()
            count = 0
            for conversation, path in logs.items():
                self._repair(path)
                count += self._index_log(index, path, conversation, 0, log.complete_size(path)[1], advance)
            index.bulk_finish()
            index.create_indexes()
            index.commit()
        except BaseException:
            index.rollback()
            raise
        with contextlib.suppress(sqlite3.OperationalError):  # busy readers: SQLite checkpoints later
            index.compact()
        return count

    # ------------------------------------------------------------------ writing

    def append(self, agent_id: str, conversation_id: str, kind: str, text: str,
               source: str | None = None, at: datetime | str | None = None) -> Message:
        """Append one message (captured_at = the store's clock; `at` is kept as stated_at)."""
        message = build(agent_id, conversation_id, kind, text, source=source, captured_at=self._stamp(),
                        stated_at=at)
        self._write(agent_id, {conversation_id: [message]})
        return message

    def _write(self, agent_id: str, groups: dict[str, list[Message]],
               progress: Callable[[int], None] | None = None) -> None:
        folder = homes.agent_folder(self.home, agent_id)
        with log.locked(folder):
            for conversation, rows in groups.items():
                path = homes.log_path(self.home, agent_id, conversation)
                self._repair(path)
                for start in range(0, len(rows), IMPORT_CHUNK):
                    chunk = rows[start : start + IMPORT_CHUNK]
                    try:
                        log.append(path, b"".join(log.serialize(m) for m in chunk), fsync=self.fsync)
                    except OSError as exc:
                        raise MemrepoError(TRANSCRIPT_WRITE_FAILED.format(
                            log=path, reason=exc.strerror or exc)) from None
                    if progress is not None:
                        progress(len(chunk))
            try:
                self._index_locked(agent_id, list(groups))
            except sqlite3.Error as exc:
                self._warn(TRANSCRIPT_INDEX_BEHIND.format(error=exc))

    def _index_locked(self, agent_id: str, conversations: Sequence[str]) -> None:
        index = self._connection(agent_id)
        if agent_id not in self._fresh:
            self._catch_up_safely(agent_id, index)
            with self._fresh_lock:
                self._fresh.add(agent_id)
            return
        index.begin()
        try:
            for conversation in conversations:
                path = homes.log_path(self.home, agent_id, conversation)
                end = log.complete_size(path)[1]
                start = index.offset(conversation)
                if end > start:
                    self._index_log(index, path, conversation, start, end)
            index.commit()
        except BaseException:
            index.rollback()
            raise

    def rebuild(self, agent: str | None = None) -> dict[str, int]:
        """Rebuild indexes from the logs (one agent, or all); returns messages per agent. The
        progress hook hears task "index" in bytes of all the logs together."""
        agents = [self._known(agent)] if agent is not None else self.agents()
        total = sum(log.complete_size(p)[1] for a in agents for p in self._logs(a).values())
        advance = self._reporter("index", total)
        done = {}
        for agent_id in agents:
            index = Index(homes.index_path(self.home, agent_id))
            try:
                with log.locked(homes.agent_folder(self.home, agent_id)):
                    done[agent_id] = self._rebuild(agent_id, index, self._logs(agent_id), None, advance)
            finally:
                index.close()
            with self._fresh_lock:
                self._fresh.add(agent_id)
        if self.progress is not None:
            self.progress("index", total, total)
        return done

    def refresh(self, agent: str | None = None) -> None:
        """Catch the index up with the logs again (rows written by other means)."""
        with self._fresh_lock:
            if agent is None:
                self._fresh.clear()
            else:
                self._fresh.discard(agent)

    def _reporter(self, task: str, total: int) -> Callable[[int], None] | None:
        """An `advance(count)` that tells the progress hook how far `task` got, or None."""
        hook = self.progress
        if hook is None:
            return None
        done = 0

        def advance(count: int) -> None:
            nonlocal done
            done += count
            hook(task, min(done, total), total)

        return advance

    # ------------------------------------------------------------------ reading

    def agents(self) -> list[str]:
        root = homes.transcripts(self.home)
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if self._has_logs(p.name))

    def _has_logs(self, agent_id: str) -> bool:
        try:
            with os.scandir(homes.agent_folder(self.home, agent_id)) as entries:
                return any(e.name.endswith(log.SUFFIX) for e in entries)
        except (FileNotFoundError, NotADirectoryError):
            return False

    def _known(self, agent_id: str) -> str:
        check_id(agent_id, "agent_id")
        if not homes.agent_folder(self.home, agent_id).is_dir() or (
                agent_id not in self._fresh and not self._has_logs(agent_id)):
            known = self.agents()
            raise MemrepoError("no transcripts for agent {agent!r}; known agents: {known}".format(
                agent=agent_id, known=", ".join(known) if known else TRANSCRIPT_NO_AGENTS))
        return agent_id

    def conversations(self, agent_id: str) -> list[str]:
        return sorted(self._logs(self._known(agent_id)))

    def read(self, agent_id: str, conversation_id: str, after: str | None = None) -> list[Message]:
        """The conversation's messages in log order; with `after`, those after that message."""
        known = self.conversations(agent_id)
        check_id(conversation_id, "conversation_id")
        if conversation_id not in known:
            raise MemrepoError(texts.TRANSCRIPT_UNKNOWN_CONVERSATION.format(
                agent=agent_id, conversation=conversation_id, known=", ".join(known)))
        path = homes.log_path(self.home, agent_id, conversation_id)
        folder = homes.agent_folder(self.home, agent_id)
        size, complete = log.complete_size(path)
        if size != complete:
            with log.locked(folder):
                self._repair(path)
        with log.locked(folder, exclusive=False):
            end = log.complete_size(path)[1]
            rows = [message for _, _, message in _tapped(log.rows(path, 0, end), 0, self._reporter("read", end))]
        if self.progress is not None:
            self.progress("read", end, end)
        if after is None:
            return rows
        for i, message in enumerate(rows):
            if message.message_id == after:
                return rows[i + 1 :]
        raise MessageNotFoundError(TRANSCRIPT_AFTER_MISSING.format(
            after=after, conversation=conversation_id, agent=agent_id), message_id=after)

    # ------------------------------------------------------------------- search

    def search(self, query: str, agent: str | None = None, conversation: str | None = None,
               kinds: Iterable[str] | None = None, sources: Iterable[str] | None = None,
               since: datetime | str | None = None, until: datetime | str | None = None,
               k: int = 10) -> list[Hit]:
        """The k best messages for `query` by BM25, best first (see search.py).

        BM25's statistics are per agent (one index file each, docs/architecture.md §3.4): a
        search over all agents ranks each agent's messages against its own transcripts and
        merges the results by score."""
        units = parse_query(query)
        if not units:
            raise MemrepoError(texts.SEARCH_NO_WORDS)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise MemrepoError(texts.SEARCH_BAD_K.format(limit=MAX_K, value=k))
        kind_list = tuple(check_kind(x) for x in kinds) if kinds is not None else None
        source_list = tuple(check_source_filter(s) for s in sources) if sources is not None else None
        since_us, until_us = time_range(since, until)
        agents = self.search_agents(agent, conversation)
        filters = Filters(conversations=(conversation,) if conversation is not None else None,
                          kinds=kind_list, sources=source_list, since_us=since_us, until_us=until_us)
        marked = [t for u in units for t in u.tokens]
        hits: list[Hit] = []
        for agent_id in agents:
            with self.snapshot(agent_id) as index:
                best = top_k(index, units, k, filters)
                found = index.messages([s.rowid for s in best], agent_id)
            for scored in best:
                message = found[scored.rowid]
                hits.append(Hit(**message.__dict__, score=scored.score,
                                snippet=snippet.make(message.text, marked)))
        hits.sort(key=lambda h: (-h.score, h.agent_id, h.message_id))
        return hits[:k]

    def search_agents(self, agent: str | None = None, conversation: str | None = None) -> list[str]:
        """The agents a search covers: `agent`, or every agent; with `conversation`, only
        those that have it. An unknown agent or conversation is an error that names what there is,
        so a typo is never an empty result."""
        agents = [self._known(agent)] if agent is not None else self.agents()
        if conversation is not None:
            check_id(conversation, "conversation_id")
            agents = [a for a in agents if homes.log_path(self.home, a, conversation).is_file()]
            if not agents:
                raise MemrepoError("no conversation {conversation!r} in the transcripts of {agents}".format(
                    conversation=conversation, agents=agent or "any agent"))
        return agents

    @contextlib.contextmanager
    def snapshot(self, agent_id: str) -> Iterator[Index]:
        """The agent's index, caught up with the logs, inside one read transaction: the
        statistics a ranking uses and the rows it reads are of the same moment."""
        index = self._index(agent_id)
        with index.snapshot():
            yield index

    # ------------------------------------------------------------------- import

    def import_lines(self, lines: Iterable[bytes], name: str = "input",
                     progress: Callable[[int, int], None] | None = None) -> ImportReport:
        """Import JSON Lines rows: every row is checked first (`import_rows`); one bad row imports nothing.

        A row may leave out message_id (`model.imported_id` makes one from the row and its
        place among the conversation's rows of the input, the same at every import), source
        (by kind) and captured_at (the import time); the row's captured_at is kept, and
        imported_at records when it was imported. Rows whose message_id the agent already has,
        or that came earlier in the file, are skipped as duplicates: importing a file again, or
        a longer copy of it, adds only what it did not have."""
        return self.import_messages(checked_rows(lines, name, self._stamp()), progress)

    def import_messages(self, parsed: Sequence[Message],
                        progress: Callable[[int, int], None] | None = None) -> ImportReport:
        """Write checked messages, every import's one way into the store: messages whose
        message_id the agent already has, or that came earlier in `parsed`, are skipped as
        duplicates, so importing the same messages again writes nothing."""
        report = ImportReport()
        seen: set[str] = set()
        by_agent: dict[str, list[Message]] = {}
        for message in parsed:
            if message.message_id in seen:
                report.duplicates += 1
                continue
            seen.add(message.message_id)
            by_agent.setdefault(message.agent_id, []).append(message)
        fresh: dict[str, dict[str, list[Message]]] = {}
        for agent_id, rows in by_agent.items():
            if (homes.agent_folder(self.home, agent_id)).is_dir():
                existing = self._index(agent_id).existing([m.message_id for m in rows])
            else:
                existing = set()
            report.duplicates += sum(1 for m in rows if m.message_id in existing)
            for message in rows:
                if message.message_id not in existing:
                    fresh.setdefault(agent_id, {}).setdefault(message.conversation_id, []).append(message)
        total = sum(len(rows) for groups in fresh.values() for rows in groups.values())
        done = 0

        def advance(count: int) -> None:
            nonlocal done
            done += count
            if progress is not None:
                progress(done, total)
            if self.progress is not None:
                self.progress("import", done, total)

        for agent_id, groups in fresh.items():
            self._write(agent_id, groups, advance)
            report.by_agent[agent_id] = sum(len(rows) for rows in groups.values())
            report.written.extend(m for rows in groups.values() for m in rows)
        report.imported = total
        return report

    def import_file(self, path: str | os.PathLike[str],
                    progress: Callable[[int, int], None] | None = None) -> ImportReport:
        try:
            with open(path, "rb") as f:
                lines = f.read().splitlines()
        except OSError as exc:
            raise MemrepoError(texts.IMPORT_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
        return self.import_lines(lines, str(path), progress)


def _tapped(rows: Iterator[tuple[int, int, Message]], start: int, advance: Callable[[int], None] | None
            ) -> Iterator[tuple[int, int, Message]]:
    """`log.rows` as it is, telling `advance` every PROGRESS_ROWS rows how many bytes were
    read since the last report (and the rest at the end)."""
    if advance is None:
        yield from rows
        return
    told = start
    last = start
    for number, item in enumerate(rows, 1):
        last = item[1]
        if number % PROGRESS_ROWS == 0:
            advance(last - told)
            told = last
        yield item
    if last > told:
        advance(last - told)


def check_source_filter(value: object) -> str:
    """A `sources` filter value: a message source, or "tool" / "external" for the whole family."""
    if value in ("tool", "external"):
        return value  # type: ignore[return-value]
    try:
        return check_source(value)
    except MemrepoError:
        raise MemrepoError(SEARCH_BAD_SOURCE.format(value=value)) from None
