"""`memrepo localhub serve`: serves on the port it names, and refuses bad ports in one line."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from localhub.operator import read_operator_token
from tests.conftest import localhub_token, run_cli


def test_serve_answers_and_stops_cleanly(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "localhub", "serve", "--port", "0",
                             "--data", str(tmp_path / "data")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"serving (http://\S+) ", line).group(1)  # type: ignore[union-attr]
        tokens = proc.stdout.readline()  # which tokens this localhub knows: those of its own data folder
        assert f"tokens are those kept in {tmp_path / 'data'};" in tokens and "another data folder" in tokens
        assert requests.get(f"{url}/_localhub/health", timeout=10).json() == {"ok": True}
        secret = read_operator_token(tmp_path / "data")
        token = requests.post(f"{url}/_localhub/tokens", json={"login": "alice"}, timeout=10,
                              headers={"Authorization": f"Bearer {secret}"}).json()["token"]
        me = requests.get(f"{url}/api/v3/user", headers={"Authorization": f"token {token}"}, timeout=10)
        assert me.json()["login"] == "alice"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert (tmp_path / "data" / "localhub.sqlite3").exists()


def test_bad_port_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "localhub", "serve", "--port", "70000", "--data", str(tmp_path))
    assert code == 1 and err == "memrepo: port 70000 is not a TCP port (0-65535)\n"


def test_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(capsys, "localhub", "serve", "--port", str(port), "--data", str(tmp_path))
    assert code == 1
    assert err.startswith(f"memrepo: localhub cannot start on 127.0.0.1:{port}") and err.count("\n") == 1


def test_create_repo_for_an_existing_owner_uses_the_operator_token(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """localhub makes accounts, tokens and repositories only for its operator: create-repo reads
    the operator token from the data folder given, or from `localhub serve`'s default one, and
    without one says in one line where it looked."""
    from bot.commands.localhub import default_data_dir
    from localhub.server import LocalhubServer

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    elsewhere = tmp_path / "elsewhere"
    with LocalhubServer(elsewhere) as server:
        for name in ("ada/one", "ada/two"):  # a newcomer, then an owner with an account
            code, out, err = run_cli(capsys, "localhub", "create-repo", name, "--url", server.url)
            assert code == 1 and out == "" and err.count("\n") == 1
            assert "operator credential" in err and str(default_data_dir()) in err and "--data" in err
            assert server.hub.store.one("SELECT COUNT(*) AS n FROM repos")["n"] == (name == "ada/two")
            code, out, err = run_cli(capsys, "localhub", "create-repo", name, "--url", server.url,
                                     "--data", str(elsewhere))
            assert (code, err) == (0, "") and out.startswith(f"created {name} on {server.url}")
    with LocalhubServer(default_data_dir()) as server:
        assert run_cli(capsys, "localhub", "create-repo", "bo/one", "--url", server.url)[0] == 0
        code, out, err = run_cli(capsys, "localhub", "create-repo", "bo/two", "--url", server.url)
        assert (code, err) == (0, "") and out.startswith(f"created bo/two on {server.url}")


def test_create_repo_for_an_owner_with_a_token_makes_no_new_token_unless_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """localhub keeps only tokens' hashes, so the token an owner has cannot be printed again;
    making a new one on every call would leave live tokens behind that nobody holds."""
    from localhub.server import LocalhubServer

    data = tmp_path / "data"
    with LocalhubServer(data) as server:
        def tokens_of_ada() -> int:
            return int(server.hub.store.one("SELECT COUNT(*) AS n FROM tokens t JOIN users u ON u.id = t.user_id "
                                            "WHERE u.login = 'ada'")["n"])

        def login_of(token: str) -> str:
            me = requests.get(f"{server.api_url}/user", headers={"Authorization": f"token {token}"}, timeout=10)
            return str(me.json()["login"])

        code, out, _ = run_cli(capsys, "localhub", "create-repo", "ada/one", "--url", server.url, "--data", str(data))
        first = out.split("x-access-token:")[1].split("@")[0]
        assert code == 0 and tokens_of_ada() == 1

        code, out, err = run_cli(capsys, "localhub", "create-repo", "ada/two", "--url", server.url, "--data", str(data))
        assert (code, err) == (0, "") and tokens_of_ada() == 1
        created, clone, kept, connect = out.splitlines()
        assert created == f"created ada/two on {server.url}"
        assert clone.endswith(f"http://x-access-token:TOKEN@{server.url[7:]}/ada/two.git")
        assert "stay valid" in kept and "--new-token" in kept and first not in out
        assert connect.startswith("connect a memory to it: memrepo repository set http://x-access-token:TOKEN@")
        repo = requests.get(f"{server.api_url}/repos/ada/two", headers={"Authorization": f"token {first}"}, timeout=10)
        assert repo.status_code == 200 and repo.json()["owner"]["login"] == "ada"

        code, out, err = run_cli(capsys, "localhub", "create-repo", "ada/two", "--url", server.url, "--data", str(data),
                                 "--new-token")
        assert (code, err) == (0, "") and out.startswith(f"ada/two already exists on {server.url}")
        second = out.split("x-access-token:")[1].split("@")[0]
        assert tokens_of_ada() == 2 and second != first
        assert login_of(first) == login_of(second) == "ada"


def test_a_token_of_another_localhub_is_refused_naming_this_ones_data(tmp_path: Path) -> None:
    """`localhub serve` and `serve --local` keep separate data; one started on the port the
    other used refuses the other's tokens. git shows only that authentication failed, so the
    401 itself says which localhub answered: its data folder, to requests addressed to loopback."""
    from localhub.server import LocalhubServer

    with LocalhubServer(tmp_path / "one") as one, LocalhubServer(tmp_path / "two") as two:
        theirs = localhub_token(one, "ada")
        info_refs = f"{two.url}/ada/memory.git/info/refs?service=git-upload-pack"

        git = requests.get(info_refs, auth=("x-access-token", theirs), timeout=10)
        assert git.status_code == 401 and git.headers["WWW-Authenticate"] == 'Basic realm="GitHub"'
        assert git.headers["X-Localhub-Data"] == str(tmp_path / "two")
        assert git.text == (f"this localhub keeps its data in {tmp_path / 'two'} and knows no such token: a token is "
                            "known only to the localhub on the data folder that made it\n")

        rest = requests.get(f"{two.api_url}/user", headers={"Authorization": f"token {theirs}"}, timeout=10)
        assert rest.status_code == 401 and rest.json()["message"] == "Bad credentials"  # GitHub's body
        assert rest.headers["X-Localhub-Data"] == str(tmp_path / "two")

        asked = requests.get(info_refs, timeout=10)  # no credentials yet: git's usual first request
        assert asked.status_code == 401 and asked.text == "Authentication required\n"

        elsewhere = requests.get(info_refs, auth=("x-access-token", theirs), headers={"Host": "forge.example"},
                                 timeout=10)
        assert elsewhere.status_code == 401 and "X-Localhub-Data" not in elsewhere.headers
        assert str(tmp_path) not in elsewhere.text and "knows no such token" in elsewhere.text

        mine = requests.get(f"{one.url}/api/v3/user", headers={"Authorization": f"token {theirs}"}, timeout=10)
        assert mine.status_code == 200 and "X-Localhub-Data" not in mine.headers
