"""The palace over HTTP without a browser: Flask's test client against `create_app` on real memory
repositories (made by `memrepo init`, edited through the memory tool and git), localhub for the
forge; and `memrepo palace`'s refusals on the command line."""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
from flask import Flask, Response

from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import MemoryTool
from bot.palace import web
from bot.palace.source import PALACE_FORGE_UNREACHABLE, Palace
from bot.provenance import why as why_module
from bot.provenance.why import HISTORY_FORGE_UNREACHABLE
from localhub.server import LocalhubServer
from tests.conftest import LocalhubMemory, arm_fault, git, localhub_token, memory_on_localhub, run_cli
from tests.memory_forge import FAST, REPO
from tests.palace.test_palace_model import TOKEN

HUMAN = "system/human.md"
LOOPBACK = {"Host": "127.0.0.1:8780"}


def tool(memory: MemoryRepo) -> MemoryTool:
    return MemoryTool(memory, push=False)


def edit(memory: MemoryRepo, old: str, new: str, path: str = HUMAN) -> str:
    result = tool(memory).call({"command": "str_replace", "path": path, "old_str": old, "new_str": new,
                                "reason": f"Note {new}"})
    assert result.ok, result.message
    return result.commit


@pytest.fixture
def app(memory: MemoryRepo) -> Flask:
    made = web.create_app(memory.root, forge=False, transcripts=False, poll_ms=1000)
    yield made
    made.extensions["memrepo_palace"].close()


def get(app: Flask, url: str, **kwargs: object) -> Response:
    headers = {**LOOPBACK, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
    return app.test_client().get(url, headers=headers, **kwargs)


# ------------------------------------------------------------------------------ pages
@pytest.mark.parametrize("url", ["/", "/file?path=system/human.md", "/why?path=system/human.md&line=4", "/why",
                                 "/log", "/log?writer=human&since=2000-01-01", "/at", "/at?date=2100-01-01",
                                 "/at?date=2100-01-01&path=system/human.md"])
def test_each_page_answers_with_one_h1_and_the_palaces_headers(app: Flask, url: str) -> None:
    answer = get(app, url)
    assert answer.status_code == 200, answer.get_data(as_text=True)[:500]
    assert answer.mimetype == "text/html"
    html = answer.get_data(as_text=True)
    assert html.count("<h1") == 1
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Cache-Control"] == "no-store"
    assert 'data-head-url="/head.json"' in html


def test_the_head_endpoint_and_the_plain_memory_block(app: Flask, memory: MemoryRepo) -> None:
    assert json.loads(get(app, "/head.json").get_data()) == {"head": memory.head_sha()}
    text = get(app, "/core.txt").get_data(as_text=True)
    assert text.startswith("<memory>") and "Nothing recorded yet." in text
    script = get(app, "/assets/palace.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript" and b"data-head-url" in script.data


def test_the_page_follows_main(app: Flask, memory: MemoryRepo) -> None:
    before = memory.head_sha()
    assert f'data-head="{before}"' in get(app, "/").get_data(as_text=True)
    after = edit(memory, "Nothing recorded yet.", "Likes green tea.")
    assert json.loads(get(app, "/head.json").get_data())["head"] == after
    page = get(app, "/").get_data(as_text=True)
    assert f'data-head="{after}"' in page and "Likes green tea." in page and "Nothing recorded yet." not in page
    log = get(app, "/log").get_data(as_text=True)
    assert "Note Likes green tea." in log


@pytest.mark.parametrize(("url", "status", "says"), [
    ("/file", 400, "no file named"),
    ("/file?path=nope.md", 404, "is not a file in memory"),
    ("/file?path=../etc/passwd", 404, "is not a path inside memory"),
    ("/why?path=system/human.md&line=0", 400, "not a line number"),
    ("/why?path=system/human.md&line=x", 400, "not a line number"),
    ("/why?path=system/human.md&line=99", 404, "there is no line 99"),
    ("/why?path=system", 303, ""),
    ("/why?path=nope.md&line=1", 404, "is not a file in memory"),
    ("/log?writer=robot", 400, "is not a writer"),
    ("/log?since=05/06/2024", 400, "cannot read"),
    ("/log?since=2026-03-02&until=2026-03-01", 400, "after until"),
    ("/log?page=0", 400, "not a page number"),
    ("/at?date=yesterday", 400, "cannot read"),
    ("/at?date=2000-01-01", 404, "did not exist yet"),
    ("/at?date=2100-01-01&path=nope.md", 404, "is not a file in memory"),
    ("/assets/../config", 404, "not a page"),
    ("/nothing", 404, "not a page of the palace"),
])
def test_bad_input_gets_a_clear_answer_and_changes_nothing(app: Flask, memory: MemoryRepo, url: str, status: int,
                                                           says: str) -> None:
    head, state = memory.head_sha(), git(memory.root, "status", "--porcelain")
    answer = get(app, url)
    assert answer.status_code == status, answer.get_data(as_text=True)[:400]
    text = answer.get_data(as_text=True)
    assert says in text
    assert "Traceback" not in text
    if status >= 400 and answer.mimetype == "text/html":
        [problem] = re.findall(r'<p class="problem">(.*?)</p>', text, re.S)
        assert "\n" not in problem.strip()
    assert (memory.head_sha(), git(memory.root, "status", "--porcelain")) == (head, state)


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_the_palace_only_reads(app: Flask, method: str) -> None:
    answer = getattr(app.test_client(), method)("/", headers=LOOPBACK)
    assert answer.status_code == 405


# ------------------------------------------------------------------------------ who may look
def test_without_a_token_only_loopback_names_are_answered(app: Flask) -> None:
    for host in ("127.0.0.1:8780", "localhost:8780", "[::1]:8780"):
        assert get(app, "/", headers={"Host": host}).status_code == 200
    refused = get(app, "/", headers={"Host": "attacker.example:8780"})
    assert refused.status_code == 403 and b"loopback" in refused.data


def test_with_a_token_a_viewer_shows_it_once_or_on_every_request(memory: MemoryRepo) -> None:
    app = web.create_app(memory.root, token=TOKEN, forge=False, transcripts=False)
    client = app.test_client()
    host = {"Host": "memory.example"}
    refused = client.get("/log", headers=host)
    assert refused.status_code == 401 and "Bearer" in refused.headers["WWW-Authenticate"]
    assert b"?token=" in refused.data
    assert client.get("/log", headers={**host, "Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get("/log", headers={**host, "Authorization": "Bearer nope"}).status_code == 401

    visit = client.get(f"/log?writer=human&token={TOKEN}", headers=host)
    assert visit.status_code == 303 and visit.headers["Location"] == "/log?writer=human"  # the token leaves the URL
    cookie = visit.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
    assert client.get("/log?writer=human", headers=host).status_code == 200  # the browser's cookie lets it in
    assert client.get("/head.json", headers=host).status_code == 200
    other = app.test_client()
    assert other.get("/log", headers=host).status_code == 401
    app.extensions["memrepo_palace"].close()


# ------------------------------------------------------------------------------ what is kept
def test_a_why_answer_is_kept_until_a_commit_changes_its_file(memory: MemoryRepo,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int | None]] = []
    real = why_module.why

    def counted(root: object, path: str, line: int | None = None, **kwargs: object) -> dict[str, object]:
        calls.append((path, line))
        return real(root, path, line, **kwargs)

    monkeypatch.setattr(why_module, "why", counted)
    first = edit(memory, "Nothing recorded yet.", "Likes tea.")
    palace = Palace(memory.root, forge=False, transcripts=False)
    report = palace.why(HUMAN, 4)
    assert report["origins"][0]["commit"]["sha"] == first and len(calls) == 1
    other = tool(memory).call({"command": "create", "path": "reference/other.md", "file_text":
                               "---\ndescription: Other\n---\nx\n", "reason": "Another file"})
    assert other.ok
    again = palace.why(HUMAN, 4)
    assert len(calls) == 1 and again["head"] == other.commit  # the same answer, at main's new commit
    assert again["origins"] == report["origins"]
    changed = edit(memory, "Likes tea.", "Likes coffee.")
    fresh = palace.why(HUMAN, 4)
    assert len(calls) == 2 and fresh["origins"][0]["commit"]["sha"] == changed
    assert fresh == why_module.why(memory.root, HUMAN, 4, forge=False, transcripts=False)
    palace.close()


def test_the_log_grows_with_main_and_filters_by_path_and_writer(memory: MemoryRepo) -> None:
    palace = Palace(memory.root, forge=False, transcripts=False)
    before = palace.log(web.model.parse_log_filter({}))
    edit(memory, "Nothing recorded yet.", "Likes tea.")
    (memory.root / "reference").mkdir()
    (memory.root / "reference" / "pat.md").write_text("---\ndescription: Pat's notes\n---\nHello.\n")
    git(memory.root, "add", "reference/pat.md")
    git(memory.root, "commit", "-q", "--no-verify", "-m", "Pat's notes")
    after = palace.log(web.model.parse_log_filter({}))
    assert after["total"] == before["total"] + 2
    assert [r["summary"] for r in after["rows"][:2]] == ["Pat's notes", "Note Likes tea."]
    assert [r["role"] for r in after["rows"][:2]] == ["human", "agent"]
    assert after["rows"][0]["paths"] == ["reference/pat.md"]
    assert after["chart"]["total"] == after["total"]
    agent = palace.log(web.model.parse_log_filter({"writer": "agent"}))
    assert [r["summary"] for r in agent["rows"]] == ["Note Likes tea.", "Create memory repository"]  # init: the agent's
    human_file = palace.log(web.model.parse_log_filter({"path": "system/human"}))
    assert human_file["path"] == HUMAN
    assert [r["summary"] for r in human_file["rows"]] == ["Note Likes tea.", "Create memory repository"]
    expected = git(memory.root, "log", "--format=%s", "--", HUMAN).splitlines()
    assert [r["summary"] for r in human_file["rows"]] == expected
    palace.close()


def test_memory_then_with_its_diff_against_now(app: Flask, memory: MemoryRepo) -> None:
    # a commit whose clock ran years behind marks a moment before the edit, whatever the second
    done = subprocess.run(["git", "commit", "-q", "--allow-empty", "--no-verify", "-m", "Pat's old clock"],
                          cwd=memory.root, env={**os.environ, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"})
    assert done.returncode == 0
    edit(memory, "Nothing recorded yet.", "Likes tea.")
    then = quote("2001-01-02")
    page = get(app, f"/at?date={then}").get_data(as_text=True)
    assert "Pat&#39;s old clock" in page and "1 changed, 0 added, 0 removed" in page
    assert '<span class="del">-Nothing recorded yet.</span>' in page
    assert '<span class="add">+Likes tea.</span>' in page
    one = get(app, f"/at?date={then}&path=system/human.md").get_data(as_text=True)
    assert "<h1>system/human.md at" in one and "Nothing recorded yet." in one


# ------------------------------------------------------------------------------ mounted by another server
def test_another_server_mounts_the_pages_under_its_own_prefix_and_authorization(tmp_path: Path,
                                                                                memory: MemoryRepo) -> None:
    palaces = {("alice", "memory"): Palace(memory.root, forge=False, transcripts=False)}
    seen: list[str] = []

    def authorize(request: object) -> Response | None:
        token = request.headers.get("Authorization", "")  # type: ignore[attr-defined]
        seen.append(request.view_args.get("repo", "") if request.view_args else "")  # type: ignore[attr-defined]
        return None if token == "Bearer viewer" else Response("no\n", status=404)

    host = Flask("serve")
    host.register_blueprint(web.blueprint(lambda key: palaces.get((key["owner"], key["repo"])), authorize=authorize,
                                          url_prefix="/palace/<owner>/<repo>", key_args=("owner", "repo"),
                                          title=lambda key: f"{key['owner']}/{key['repo']}"))
    client = host.test_client()
    viewer = {"Authorization": "Bearer viewer"}
    page = client.get("/palace/alice/memory/", headers=viewer)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "<h1>Memory of alice/memory</h1>" in html
    assert 'href="/palace/alice/memory/why?path=system/human.md&amp;line=4"' in html
    assert 'data-head-url="/palace/alice/memory/head.json"' in html
    assert client.get("/palace/alice/memory/why?path=system/human.md&line=4", headers=viewer).status_code == 200
    assert client.get("/palace/alice/other/", headers=viewer).status_code == 404
    assert client.get("/palace/alice/memory/").status_code == 404  # refused before anything is read
    palaces[("alice", "memory")].close()


# ------------------------------------------------------------------------------ the forge
class World(LocalhubMemory):
    pass


def test_pending_pull_requests_come_from_the_forge_and_a_forge_that_fails_is_said_to(
        localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.dream.runner import run_dream

    w = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    try:
        w.store.append("a1", "c1", "user", "I live in Berlin.")
        dream = run_dream(w.memory, "a1", "c1", store=w.store, retry=FAST)
        import github

        gh = github.Github(auth=github.Auth.Token(localhub_token(localhub, "bob")), base_url=localhub.api_url,
                           retry=None)
        gh.get_repo(REPO).get_pull(dream.pr).create_review(body="Yes.", event="APPROVE")
        app = web.create_app(w.memory.root, poll_ms=1000)
        page = get(app, "/").get_data(as_text=True)
        assert f'data-number="{dream.pr}"' in page and "memrepo/dream/" in page and "bob approved" in page
        assert "<h1>Memory of alice/memory</h1>" in page
        arm_fault(localhub, method="GET", path="/repos/*/pulls", status=502, times=10)
        palace = app.extensions["memrepo_palace"]
        palace.forge.forget()
        failed = get(app, "/")
        assert failed.status_code == 200
        assert "the forge could not be asked for open pull requests" in failed.get_data(as_text=True)
        palace.close()
    finally:
        w.store.close()


def test_a_forge_that_cannot_be_reached_is_said_to_in_a_whole_sentence(
        localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """origin names a forge that is not running: the palace's pages say so in its own words,
    whole, and what to do; the transport's error text (a ConnectionError, cut) is not shown."""
    w = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    try:
        root = w.memory.root
        git(root, "checkout", "-q", "-b", "topic")
        (root / HUMAN).write_text((root / HUMAN).read_text() + "\n- Lives in Berlin.\n")
        git(root, "commit", "-q", "-am", "Note Berlin")
        git(root, "checkout", "-q", "main")
        git(root, "merge", "-q", "--no-ff", "-m", "Merge pull request #1 from alice/topic", "topic")
        with socket.socket() as sock:  # a port nothing listens on once closed
            sock.bind(("127.0.0.1", 0))
            closed = sock.getsockname()[1]
        git(root, "remote", "set-url", "origin", f"http://x-access-token:{w.token}@127.0.0.1:{closed}/alice/memory.git")
        app = web.create_app(root, transcripts=False, poll_ms=1000)
        try:
            said = PALACE_FORGE_UNREACHABLE.format(repository=REPO)
            page = html.unescape(get(app, "/").get_data(as_text=True))
            assert said in page
            line = (root / HUMAN).read_text().splitlines().index("- Lives in Berlin.") + 1
            why = html.unescape(get(app, f"/why?path={HUMAN}&line={line}").get_data(as_text=True))
            assert HISTORY_FORGE_UNREACHABLE.format(repository=REPO) in why
            for text in (page, why):
                assert "ConnectionError" not in text and "HTTPConnectionPool" not in text
        finally:
            app.extensions["memrepo_palace"].close()
    finally:
        w.store.close()


# ------------------------------------------------------------------------------ the command line
@pytest.mark.parametrize(("args", "says"), [
    (["--host", "0.0.0.0"], "is not a loopback address"),
    (["--host", "192.168.1.5", "--token", "short"], "too short"),
    (["--port", "70000"], "is not a port"),
    (["--port", "x"], "is not a port"),
    (["--poll", "0"], "is not a number of seconds"),
    (["--repo", "/nonexistent/memory"], "does not exist"),
])
def test_the_command_refuses_what_it_cannot_serve_in_one_line(memory: MemoryRepo, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                              says: str) -> None:
    monkeypatch.delenv("MEMREPO_PALACE_TOKEN", raising=False)
    code, out, err = run_cli(capsys, "palace", "--repo", str(memory.root), "--port", "0", *args)
    assert code == 1 and out == ""
    assert err.startswith("memrepo: ") and says in err and err.count("\n") == 1


def test_a_port_in_use_is_refused_in_one_line(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli(capsys, "palace", "--repo", str(memory.root), "--port", str(port))
    assert code == 1 and f"cannot listen on 127.0.0.1:{port}" in err and err.count("\n") == 1


def test_the_command_serves_until_it_is_stopped(memory: MemoryRepo) -> None:
    import sys

    import requests

    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "palace", "--repo", str(memory.root), "--port", "0"],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r" at (http://127\.0\.0\.1:\d+/) ", line)
        assert url, line
        assert requests.get(url.group(1) + "head.json", timeout=10).json() == {"head": memory.head_sha()}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0 and "stopped" in err and "Traceback" not in err


def test_a_v2_memory_shows_its_root_files_as_core_memory(tmp_path: Path) -> None:
    """MemFS v2: core memory is the Markdown at the root (not system/), as the prompt compiles it."""
    from bot.memfs.create import init_repository

    memory = init_repository(tmp_path / "memory", "a1", "Ada", "v2")
    palace = Palace(memory.root, forge=False, transcripts=False)
    blocks = [(b["path"], b["name"]) for b in palace.overview()["blocks"]]
    assert ("human.md", "human") in blocks and not any(path.startswith("system/") for path, _ in blocks)
    page = web.create_app(memory.root, forge=False, transcripts=False).test_client().get("/")
    assert page.status_code == 200 and "the Markdown files at the root" in page.get_data(as_text=True)
    assert palace.file("human.md")["kind"] == "core"
    assert palace.file("MEMORY.md")["kind"] != "external"


def test_the_palace_shows_and_explains_an_attached_shared_memorys_files_as_the_tool_addresses_them(
        memory: MemoryRepo, tmp_path: Path) -> None:
    from bot.memfs import shared_projection, sync
    from bot.memfs.create import init_repository

    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    team = init_repository(tmp_path / "team", "t0", "Team")
    runbook = team.root / "runbooks" / "deploys.md"
    runbook.parent.mkdir()
    runbook.write_text("---\ndescription: How we deploy.\n---\n\n- Deploys happen on Tuesdays.\n")
    git(team.root, "add", "-A")
    git(team.root, "commit", "-q", "--no-verify", "-m", "runbook: Tuesdays")
    sync.set_remote(team, str(bare))
    assert sync.push(team).pushed
    shared_projection.attach(memory, str(bare))
    path = "shared/team/runbooks/deploys.md"
    palace = Palace(memory.root, forge=False, transcripts=False)
    view = palace.file(path)
    assert view["path"] == path and view["description"] == "How we deploy." and view["head"] == memory.head_sha()
    assert "Deploys happen on Tuesdays." in json.dumps(view["lines"])
    assert palace.why(path, 5)["origins"][0]["commit"]["summary"] == "runbook: Tuesdays"
    # The team's main moves; the agent's own HEAD does not: the palace answers from the new commit.
    runbook.write_text(runbook.read_text().replace("Tuesdays", "Wednesdays"))
    git(team.root, "commit", "-q", "--no-verify", "-am", "runbook: Wednesdays")
    git(team.root, "push", "-q", "origin", "main")
    assert all(done.ok for done in shared_projection.sync_all(memory))
    assert palace.why(path, 5)["origins"][0]["commit"]["summary"] == "runbook: Wednesdays"
    page = web.create_app(memory.root, forge=False, transcripts=False).test_client().get(f"/file?path={quote(path)}")
    assert page.status_code == 200 and "Wednesdays" in page.get_data(as_text=True)
