"""One agent's search index: a SQLite file beside the logs, rebuildable from them.

Tables:
  messages  one row per message (fields, the token stream, its length, where it is in the log)
  fts       FTS5, contentless, `ascii` tokenizer (see tokenize.py), used only as posting lists:
            column `tokens` holds the token stream, column `rep` each token that occurs two
            or more times in the message, so the few messages where a term's frequency is
            not 1 are found without reading every match
  terms     per token: document frequency, and the skyline of (occurrences, message length)
            pairs that bounds what it can add to a score (see bm25.tight_bound), so planning
            a query costs no index scan
  stats     number of messages and of tokens (BM25's N and avgdl, equal to FTS5's own)
  logs      per conversation log, the byte offset up to which rows are indexed
  meta      schema and tokenizer versions: a mismatch means "rebuild from the logs"

The index is derived data: WAL with synchronous=NORMAL (a crash may lose the last
transactions, never consistency; the byte offsets bring it back up to date).
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from bot.transcript import bm25
from bot.transcript.model import Message, micros_of
from bot.transcript.tokenize import tokenize, tokenizer_version

SCHEMA_VERSION = "3"
BATCH = 5000

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE logs(conversation_id TEXT PRIMARY KEY, offset INTEGER NOT NULL);
CREATE TABLE messages(
  rowid INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL UNIQUE,
  conversation_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  source TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  at_us INTEGER NOT NULL,
  stated_at TEXT,
  imported_at TEXT,
  text TEXT NOT NULL,
  tokens TEXT NOT NULL,
  length INTEGER NOT NULL,
  log_offset INTEGER NOT NULL
);
CREATE TABLE terms(term TEXT PRIMARY KEY, df INTEGER NOT NULL, sky TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE stats(id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL, total INTEGER NOT NULL);
INSERT INTO stats VALUES (0, 0, 0);
CREATE VIRTUAL TABLE fts USING fts5(tokens, rep, content='', tokenize='ascii');
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS messages_conversation ON messages(conversation_id, at_us);
CREATE INDEX IF NOT EXISTS messages_time ON messages(at_us);
"""
_DROP = ("fts", "messages", "terms", "stats", "logs", "meta")
MESSAGE_COLUMNS = ("message_id", "conversation_id", "kind", "source", "captured_at", "stated_at",
                   "imported_at", "text")


def _script(conn: sqlite3.Connection, sql: str) -> None:
    """Run statements one by one: executescript() would commit the caller's transaction."""
    for statement in sql.split(";\n"):
        if statement.strip():
            conn.execute(statement)


class Index:
    """A connection to one agent's index file (one per thread)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA cache_size=-65536")
        self.conn.execute("PRAGMA temp_store=MEMORY")
        self._bulk: tuple[Counter[str], dict[str, dict[int, int]]] | None = None
        self._lengths = array("I")
        self._generation: str | None = None

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ lifecycle

    def current(self) -> bool:
        """Whether the file holds an index of this schema and tokenizer."""
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:
            return False
        return meta.get("schema") == SCHEMA_VERSION and meta.get("tokenizer") == tokenizer_version()

    def reset(self) -> None:
        """Empty tables of the current schema (inside the caller's transaction)."""
        for table in _DROP:
            self.conn.execute(f"DROP TABLE IF EXISTS {table}")
        _script(self.conn, _TABLES)
        self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [
            ("schema", SCHEMA_VERSION), ("tokenizer", tokenizer_version()), ("generation", uuid.uuid4().hex)])

    def create_indexes(self) -> None:
        _script(self.conn, _INDEXES)

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def compact(self) -> None:
        """Give the disk back after a rebuild (its write-ahead log holds the whole index)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: statistics, frequencies and matches all of the same moment."""
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    # ------------------------------------------------------------------- writing

    def offsets(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT conversation_id, offset FROM logs"))

    def offset(self, conversation_id: str) -> int:
        row = self.conn.execute("SELECT offset FROM logs WHERE conversation_id = ?", (conversation_id,)).fetchone()
        return row[0] if row else 0

    def set_offset(self, conversation_id: str, offset: int) -> None:
        self.conn.execute("INSERT INTO logs VALUES (?, ?) ON CONFLICT(conversation_id) "
                          "DO UPDATE SET offset = excluded.offset", (conversation_id, offset))

    def add(self, items: Iterable[tuple[int, Message]]) -> tuple[int, list[str]]:
        """Index (log offset, message) pairs inside the caller's transaction; returns how
        many were added and the ids skipped because the index already has them. Between
        bulk_start() and bulk_finish() term statistics are kept in memory and written once."""
        added = 0
        skipped: list[str] = []
        batch: list[tuple[int, Message]] = []
        for item in items:
            batch.append(item)
            if len(batch) >= BATCH:
                added += self._add_batch(batch, skipped)
                batch = []
        if batch:
            added += self._add_batch(batch, skipped)
        return added, skipped

    def bulk_start(self) -> None:
        self._bulk = (Counter(), {})

    def bulk_finish(self) -> None:
        bulk, self._bulk = self._bulk, None
        if bulk is not None:
            df, sky = bulk
            self._write_terms(df, sky)

    def _write_terms(self, df: Counter[str], sky: dict[str, dict[int, int]]) -> None:
        stored: dict[str, str] = {}
        terms = list(sky)
        for start in range(0, len(terms), 500):
            chunk = terms[start : start + 500]
            marks = ",".join("?" * len(chunk))
            stored.update(self.conn.execute(f"SELECT term, sky FROM terms WHERE term IN ({marks})", chunk))
        rows = []
        for term, points in sky.items():
            old = stored.get(term)
            merged = bm25.merge_skylines(bm25.decode_skyline(old), points) if old else bm25.skyline(points)
            rows.append((term, df[term], bm25.encode_skyline(merged)))
        self.conn.executemany("INSERT INTO terms VALUES (?, ?, ?) ON CONFLICT(term) DO UPDATE SET "
                              "df = df + excluded.df, sky = excluded.sky", rows)

    def _add_batch(self, batch: Sequence[tuple[int, Message]], skipped: list[str]) -> int:
        conn = self.conn
        first = (conn.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 0) + 1
        token_lists = [tokenize(m.text) for _, m in batch]
        values = [
            (first + i, m.message_id, m.conversation_id, m.kind, m.source, m.captured_at,
             micros_of(m.captured_at), m.stated_at, m.imported_at, m.text, " ".join(tokens), len(tokens),
             offset)
            for i, ((offset, m), tokens) in enumerate(zip(batch, token_lists, strict=True))
        ]
        cursor = conn.executemany("INSERT OR IGNORE INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", values)
        keep = list(range(len(batch)))
        if cursor.rowcount != len(batch):  # some ids were indexed before: find them
            present = {row[0] for row in conn.execute(
                "SELECT rowid FROM messages WHERE rowid >= ? AND rowid < ?", (first, first + len(batch)))}
            keep = [i for i in keep if first + i in present]
            skipped.extend(batch[i][1].message_id for i in range(len(batch)) if first + i not in present)
        counts = {i: Counter(token_lists[i]) for i in keep}
        conn.executemany("INSERT INTO fts(rowid, tokens, rep) VALUES (?, ?, ?)", (
            (first + i, values[i][10], " ".join(t for t, n in counts[i].items() if n > 1)) for i in keep))
        bulk = self._bulk
        df, sky = bulk if bulk is not None else (Counter(), {})
        total = 0
        for i in keep:
            tokens = token_lists[i]
            length = len(tokens)
            total += length
            for term, tf in counts[i].items():
                df[term] += 1
                points = sky.get(term)
                if points is None:
                    sky[term] = {tf: length}
                elif length < points.get(tf, length + 1):
                    points[tf] = length
        if bulk is None:
            self._write_terms(df, sky)
        conn.execute("UPDATE stats SET n = n + ?, total = total + ?", (len(keep), total))
        return len(keep)

    # ------------------------------------------------------------------- reading

    def stats(self) -> tuple[int, int]:
        n, total = self.conn.execute("SELECT n, total FROM stats").fetchone()
        return n, total

    def dfs(self, terms: Sequence[str]) -> dict[str, tuple[int, dict[int, int]]]:
        """Document frequency and skyline of each term (0 and {} when absent)."""
        found: dict[str, tuple[int, dict[int, int]]] = {t: (0, {}) for t in terms}
        for start in range(0, len(terms), 500):
            chunk = terms[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for term, df, sky in self.conn.execute(f"SELECT term, df, sky FROM terms WHERE term IN ({marks})", chunk):
                found[term] = (df, bm25.decode_skyline(sky))
        return found

    def count(self, expression: str) -> int:
        return self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expression,)).fetchone()[0]

    def rowids(self, expression: str, where: str = "", params: Sequence[object] = ()) -> list[int]:
        """Rowids of the messages matching an FTS5 expression (and the filters on messages m)."""
        if where:
            sql = ("SELECT fts.rowid FROM fts CROSS JOIN messages m ON m.rowid = fts.rowid "
                   f"WHERE fts MATCH ? AND {where}")
            rows = self.conn.execute(sql, (expression, *params)).fetchall()
        else:
            rows = self.conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expression,)).fetchall()
        return [r[0] for r in rows]

    def state(self) -> tuple[int, int, str, int]:
        """(messages, tokens, generation, highest rowid) in one statement."""
        return self.conn.execute(
            "SELECT n, total, (SELECT value FROM meta WHERE key = 'generation'), "
            "(SELECT coalesce(max(rowid), 0) FROM messages) FROM stats").fetchone()

    def lengths(self, generation: str, top: int) -> array[int]:
        """Token count of every message by rowid, kept in memory and extended as rows come
        (read again when the index was rebuilt); `generation` and `top` come from state(),
        read in the same snapshot()."""
        if generation != self._generation:
            self._lengths = array("I")
            self._generation = generation
        have = len(self._lengths) - 1
        if top > have:
            grow = array("I", bytes(4 * (top - have))) if have >= 0 else array("I", bytes(4 * (top + 1)))
            self._lengths.extend(grow)
            lengths = self._lengths
            for rowid, length in self.conn.execute("SELECT rowid, length FROM messages WHERE rowid > ?",
                                                   (max(have, 0),)):
                lengths[rowid] = length
        return self._lengths

    def tokens(self, rowids: Sequence[int]) -> dict[int, tuple[list[str], int]]:
        out: dict[int, tuple[list[str], int]] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, tokens, length in self.conn.execute(
                    f"SELECT rowid, tokens, length FROM messages WHERE rowid IN ({marks})", chunk):
                out[rowid] = (tokens.split(), length)
        return out

    def message_ids(self, rowids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self.conn.execute(f"SELECT rowid, message_id FROM messages WHERE rowid IN ({marks})", chunk))
        return out

    def messages(self, rowids: Sequence[int], agent_id: str) -> dict[int, Message]:
        out: dict[int, Message] = {}
        columns = ", ".join(MESSAGE_COLUMNS)
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, *values in self.conn.execute(
                    f"SELECT rowid, {columns} FROM messages WHERE rowid IN ({marks})", chunk):
                fields = dict(zip(MESSAGE_COLUMNS, values, strict=True))
                out[rowid] = Message(agent_id=agent_id, **fields)
        return out

    def count_filtered(self, where: str, params: Sequence[object], cap: int) -> int:
        """How many messages pass the filters, counting no further than `cap`."""
        return self.conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM messages m WHERE {where} LIMIT ?)",
                                 (*params, cap)).fetchone()[0]

    def filtered(self, where: str, params: Sequence[object], cap: int) -> list[tuple[int, str, int, str]]:
        """Up to `cap` rows (rowid, tokens, length, message_id) passing the filters."""
        return self.conn.execute(
            f"SELECT rowid, tokens, length, message_id FROM messages m WHERE {where} LIMIT ?",
            (*params, cap)).fetchall()

    def existing(self, message_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(message_ids), 500):
            chunk = message_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(row[0] for row in self.conn.execute(
                f"SELECT message_id FROM messages WHERE message_id IN ({marks})", chunk))
        return found

    def locate(self, message_id: str) -> tuple[str, int] | None:
        """(conversation, log offset) of a message."""
        row = self.conn.execute("SELECT conversation_id, log_offset FROM messages WHERE message_id = ?",
                                (message_id,)).fetchone()
        return (row[0], row[1]) if row else None

    def conversations(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT conversation_id FROM logs")}
