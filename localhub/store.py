"""localhub's state: one SQLite file beside the bare repositories under `--data`.

Everything that is not git (accounts, tokens, apps, pull requests, comments, labels,
reviews, statuses, hooks, deliveries) lives here, so the forge survives a restart. One
connection per thread, writes serialised by one lock: localhub serves tests and demos, not
a fleet, and a single writer keeps every multi-row change atomic.

The file (and SQLite's -wal and -shm beside it) is readable by its owner only, and tokens
are kept as their SHA-256: a copy of the database, or of a backup, gives no working token.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TOKENS = """CREATE TABLE IF NOT EXISTS tokens (
  token_hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),
  installation_id INTEGER, expires_at REAL, created_at REAL NOT NULL);"""
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY, login TEXT NOT NULL UNIQUE COLLATE NOCASE, type TEXT NOT NULL DEFAULT 'User',
  name TEXT, email TEXT, created_at REAL NOT NULL);
{TOKENS}
CREATE TABLE IF NOT EXISTS apps (
  id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL, owner_id INTEGER NOT NULL,
  bot_user_id INTEGER NOT NULL, public_key TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS installations (
  id INTEGER PRIMARY KEY, app_id INTEGER NOT NULL REFERENCES apps(id), account_id INTEGER NOT NULL,
  created_at REAL NOT NULL, UNIQUE (app_id, account_id));
CREATE TABLE IF NOT EXISTS repos (
  id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL REFERENCES users(id), name TEXT NOT NULL COLLATE NOCASE,
  description TEXT, private INTEGER NOT NULL DEFAULT 0, default_branch TEXT NOT NULL DEFAULT 'main',
  next_number INTEGER NOT NULL DEFAULT 1, created_at REAL NOT NULL, updated_at REAL NOT NULL,
  pushed_at REAL, protection TEXT, UNIQUE (owner_id, name));
CREATE TABLE IF NOT EXISTS pulls (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repos(id), number INTEGER NOT NULL,
  user_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT, state TEXT NOT NULL DEFAULT 'open',
  draft INTEGER NOT NULL DEFAULT 0, head_ref TEXT NOT NULL, head_sha TEXT NOT NULL,
  base_ref TEXT NOT NULL, base_sha TEXT NOT NULL, merged_at REAL, merged_by_id INTEGER,
  merge_commit_sha TEXT, mergeable INTEGER, mergeable_state TEXT NOT NULL DEFAULT 'unknown',
  mergeable_key TEXT, rebaseable INTEGER, created_at REAL NOT NULL, updated_at REAL NOT NULL,
  closed_at REAL, UNIQUE (repo_id, number));
CREATE TABLE IF NOT EXISTS comments (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, number INTEGER NOT NULL, user_id INTEGER NOT NULL,
  body TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS labels (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, name TEXT NOT NULL COLLATE NOCASE,
  color TEXT NOT NULL DEFAULT 'ededed', description TEXT, UNIQUE (repo_id, name));
CREATE TABLE IF NOT EXISTS issue_labels (
  repo_id INTEGER NOT NULL, number INTEGER NOT NULL, label_id INTEGER NOT NULL,
  PRIMARY KEY (repo_id, number, label_id));
CREATE TABLE IF NOT EXISTS reviews (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, number INTEGER NOT NULL, user_id INTEGER NOT NULL,
  state TEXT NOT NULL, body TEXT, commit_id TEXT NOT NULL, submitted_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS statuses (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, sha TEXT NOT NULL, state TEXT NOT NULL,
  context TEXT NOT NULL, description TEXT, target_url TEXT, creator_id INTEGER NOT NULL,
  created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hooks (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, config TEXT NOT NULL, events TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1, created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS deliveries (
  id INTEGER PRIMARY KEY, guid TEXT NOT NULL, hook_id INTEGER NOT NULL, repo_id INTEGER NOT NULL,
  event TEXT NOT NULL, action TEXT, payload TEXT NOT NULL, redelivery INTEGER NOT NULL DEFAULT 0,
  status_code INTEGER, status TEXT NOT NULL DEFAULT 'pending', duration REAL, delivered_at REAL,
  request_headers TEXT, response_headers TEXT, response_body TEXT, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS collaborators (
  repo_id INTEGER NOT NULL REFERENCES repos(id), user_id INTEGER NOT NULL REFERENCES users(id),
  permission TEXT NOT NULL DEFAULT 'push', created_at REAL NOT NULL, PRIMARY KEY (repo_id, user_id));
CREATE INDEX IF NOT EXISTS statuses_by_sha ON statuses (repo_id, sha);
CREATE INDEX IF NOT EXISTS deliveries_by_hook ON deliveries (hook_id);
"""


MAX_IDLE = 16  # pooled connections kept open between requests


class Store:
    """SQLite access for localhub. `tx()` gives a connection inside one write transaction;
    `read()` gives one for queries. Rows come back as sqlite3.Row (by column name)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._lock = threading.RLock()
        self._idle: list[sqlite3.Connection] = []
        self._idle_lock = threading.Lock()
        _private_file(path)
        with self._lock:
            conn = self._connection()
            conn.executescript(SCHEMA)
            _hash_plain_tokens(conn)
        for companion in ("-wal", "-shm"):
            if path.with_name(path.name + companion).exists():
                _private_file(path.with_name(path.name + companion))

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self._idle_lock:
                conn = self._idle.pop() if self._idle else None
            self._local.conn = conn = conn or self._open()
        return conn

    def release(self) -> None:
        """Hand this thread's connection on to the next thread that needs one. The HTTP server
        runs every request on a new thread, and opening a connection costs more than the
        queries of most requests."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._idle_lock:
            if not conn.in_transaction and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: everything inside commits together or not at all."""
        with self._lock:
            conn = self._connection()
            if conn.in_transaction:  # nested: join the outer transaction
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def read(self) -> sqlite3.Connection:
        return self._connection()

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self.read().execute(sql, args).fetchone()

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.read().execute(sql, args).fetchall()

    def next_id(self, db: sqlite3.Connection, sequence: str, start: int) -> int:
        """Ids that look like GitHub's (large, distinct per kind) and survive restarts."""
        row = db.execute("SELECT value FROM meta WHERE key = ?", (f"seq:{sequence}",)).fetchone()
        value = int(row["value"]) + 1 if row else start
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"seq:{sequence}", str(value)))
        return value

    def close(self) -> None:
        self.release()
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _private_file(path: Path) -> None:
    """Create `path` readable by its owner only, or make it so. SQLite creates its -wal and
    -shm files with the database file's mode, so they follow."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    os.chmod(path, 0o600)


def _hash_plain_tokens(conn: sqlite3.Connection) -> None:
    """Databases from before tokens were hashed keep them in a `token` column: hash each into
    `token_hash`, so their tokens keep working and the plain ones are gone (overwritten on
    disk, not only unlinked from the table)."""
    columns = {row["name"] for row in conn.execute("PRAGMA table_info(tokens)")}
    if "token" not in columns:
        return
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("ALTER TABLE tokens RENAME TO plain_tokens")
        conn.execute(TOKENS)
        rows = conn.execute("SELECT * FROM plain_tokens").fetchall()
        conn.executemany("INSERT OR IGNORE INTO tokens (token_hash, user_id, installation_id, expires_at, created_at)"
                         " VALUES (?, ?, ?, ?, ?)",
                         [(token_hash(r["token"]), r["user_id"], r["installation_id"], r["expires_at"], r["created_at"])
                          for r in rows])
        conn.execute("DROP TABLE plain_tokens")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA secure_delete=OFF")


def token_hash(token: str) -> str:
    """What the database keeps of a token, and looks it up by."""
    return hashlib.sha256(token.encode()).hexdigest()


def now() -> float:
    return time.time()


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
