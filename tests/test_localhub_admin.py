"""localhub's database as a security boundary: readable by its owner only, with tokens kept
as hashes (also those of a database from before they were)."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import requests

from bot.forge.localhub.server import LocalhubServer
from tests.conftest import localhub_token


def whoami(server: LocalhubServer, token: str) -> str:
    resp = requests.get(f"{server.api_url}/user", headers={"Authorization": f"token {token}"}, timeout=10)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["login"])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------------------------- the database
def test_the_database_is_readable_by_its_owner_only(localhub: LocalhubServer) -> None:
    localhub_token(localhub, "alice")
    data = localhub.hub.data_dir
    files = [data / name for name in ("localhub.sqlite3", "localhub.sqlite3-wal", "localhub.sqlite3-shm")]
    assert all(path.exists() for path in files)
    assert [mode(path) for path in files] == [0o600] * 3


def test_an_old_database_is_made_private_when_opened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "localhub.sqlite3").touch(mode=0o644)
    with LocalhubServer(data):
        assert mode(data / "localhub.sqlite3") == 0o600


def test_tokens_are_kept_as_hashes(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    database = (localhub.hub.data_dir / "localhub.sqlite3").read_bytes()
    wal = (localhub.hub.data_dir / "localhub.sqlite3-wal").read_bytes()
    assert token.encode() not in database + wal
    assert whoami(localhub, token) == "alice"


def test_plain_tokens_of_an_old_database_are_hashed_and_keep_working(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    old = sqlite3.connect(data / "localhub.sqlite3")
    old.executescript(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT NOT NULL UNIQUE COLLATE NOCASE,"
        " type TEXT NOT NULL DEFAULT 'User', name TEXT, email TEXT, created_at REAL NOT NULL);"
        "CREATE TABLE tokens (token TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),"
        " installation_id INTEGER, expires_at REAL, created_at REAL NOT NULL);"
        "INSERT INTO users (id, login, created_at) VALUES (1001, 'alice', 0);"
        "INSERT INTO tokens (token, user_id, created_at) VALUES ('ghp_oldplaintoken', 1001, 0);")
    old.commit()
    old.close()
    with LocalhubServer(data) as server:
        assert whoami(server, "ghp_oldplaintoken") == "alice"
    check = sqlite3.connect(data / "localhub.sqlite3")
    kept = [row[0] for row in check.execute("SELECT token_hash FROM tokens")]
    check.close()
    assert kept and "ghp_oldplaintoken" not in kept
    assert b"ghp_oldplaintoken" not in b"".join(path.read_bytes() for path in data.glob("localhub.sqlite3*"))
