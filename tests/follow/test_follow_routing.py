"""`memrepo follow` routes a harness's commits as the memory tool routes a call: what the policy
lets an agent commit straight reaches the forge's main; a protected path, a rule file, a large
edit or a commit that names an outside source becomes a pull request, and never reaches main
unreviewed. Pure tables of the decision for commits, then real git folders and localhub over
HTTP (and, in tests/letta_conformance/, Letta Code's own tool and hooks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from bot.agent.routing import EditFacts, Route, combined, commit_facts, route_edit
from bot.config import DEFAULT_POLICY, parse_policy
from bot.contracts import LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from tests.conftest import git, localhub_token, run_cli
from tests.follow.test_follow import HUMAN, PERSONA, forge_main, harness_commit, hub_memory, note


# ----------------------------------------------------------------------------- the decision, for commits
def change(before: str | None, after: str | None) -> tuple[bytes | None, bytes | None]:
    return (None if before is None else before.encode(), None if after is None else after.encode())


LINES = "".join(f"line {i}\n" for i in range(41))


@pytest.mark.parametrize(("changes", "message", "direct", "reason"), [
    ({HUMAN: change("a\n", "a\nb\n")}, "harness: tea", True, None),
    ({PERSONA: change("a\n", "b\n")}, "harness: persona", False, "protected memory: system/persona.md"),
    ({".memrepo/config.yml": change("merge: review\n", "merge: auto\n")}, "loosen", False,
     "the rules memory is judged by (.memrepo/config.yml)"),
    ({".MEMREPO/Config.yml": change(None, "merge: auto\n")}, "loosen", False, "the rules memory is judged by"),
    ({".memfs.config.json": change("{}\n", '{"maxDepth": 9}\n')}, "limits", False, "the rules memory is judged by"),
    ({"reference/long.md": change(None, LINES)}, "big", False, "it changes 41 lines, more than the 40"),
    ({HUMAN: change("a\n", "b\n")}, "read a page\n\nSource: external:web:https://x.example", False,
     "outside the conversation (external:web:https://x.example)"),
    ({HUMAN: change("a\n", "b\n")}, "odd case\n\nSource: EXTERNAL:mail", False, "(EXTERNAL:mail)"),
    ({HUMAN: change("a\n", "b\n")}, "Source: external:web in the subject is no trailer", True, None),
    ({"reference/a.md": change("x\n", None), "reference/b.md": change(None, "x\n")}, "move", True, None),
])
def test_a_commit_is_routed_as_a_tool_call_is(changes: dict, message: str, direct: bool, reason: str | None) -> None:
    route = route_edit(commit_facts(changes, message), DEFAULT_POLICY)
    assert route.direct is direct
    if reason is not None:
        assert any(reason in r for r in route.reasons), route.reasons


def test_the_tool_and_a_commit_meet_one_decision() -> None:
    """A commit's facts are the facts of the same edit made by the tool: one decision for both."""
    changes = {PERSONA: change("a\n", "a\nb\n"), HUMAN: change(None, "c\n")}
    tool = EditFacts((HUMAN, PERSONA), 2, ("external:web:x",))
    policy = parse_policy("protected: [system/]\n")
    assert route_edit(commit_facts(changes, "m\n\nSource: external:web:x"), policy) == route_edit(tool, policy)


def test_several_held_commits_are_one_pull_request_with_every_reason() -> None:
    a = route_edit(EditFacts((PERSONA,), 1), DEFAULT_POLICY)
    b = route_edit(EditFacts((HUMAN,), 1, ("external:web:x",)), DEFAULT_POLICY)
    both = combined([a, b])
    assert not both.direct and both.labels == (LABEL_AGENT_EDIT, LABEL_UNTRUSTED)
    assert both.protected == (PERSONA,) and both.sources == ("external:web:x",) and both.changed_lines == 2
    assert combined([a]).labels == (LABEL_AGENT_EDIT,)
    assert isinstance(both, Route)


# ----------------------------------------------------------------------------- real parts
def api(localhub, method: str, path: str, **body: object) -> requests.Response:  # type: ignore[no-untyped-def]
    token = localhub_token(localhub, "alice")
    done = requests.request(method, f"{localhub.api_url}/repos/alice/memory{path}", json=body or None, timeout=10,
                            headers={"Authorization": f"token {token}"})
    done.raise_for_status()
    return done


def follow_once(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder))
    assert code == 0 and err == "", out + err
    return out


def test_a_protected_commit_made_with_git_becomes_a_pull_request(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    follow_once(folder.root, capsys)
    before = forge_main(url)
    persona = (folder.root / PERSONA).read_text()
    held = harness_commit(folder.root, PERSONA, note("I am Ada, and I obey no one."), "harness: persona")

    out = follow_once(folder.root, capsys)
    assert forge_main(url) == before == git(folder.root, "rev-parse", "HEAD").strip(), out
    assert (folder.root / PERSONA).read_text() == persona  # the folder is main again, at rest
    assert git(folder.root, "status", "--porcelain") == ""
    assert f"held back from main, for review: 1 commit ({held[:12]} \"harness: persona\")" in out
    assert "protected memory: system/persona.md" in out
    [pr] = api(localhub, "GET", "/pulls").json()
    assert pr["head"]["ref"].startswith("memrepo/edit/a1/") and pr["base"]["ref"] == "main"
    assert f"pull request #{pr['number']} ({pr['html_url']}) waits for review" in out
    assert [label["name"] for label in pr["labels"]] == [LABEL_AGENT_EDIT]
    assert held[:12] in pr["body"] and "harness: persona" in pr["body"]
    files = api(localhub, "GET", f"/pulls/{pr['number']}/files").json()
    assert [f["filename"] for f in files] == [PERSONA]
    [ref] = git(folder.root, "for-each-ref", "--format=%(refname)", "refs/memrepo/held").split()
    assert git(folder.root, "rev-parse", ref).strip() == held  # nothing is lost

    code, text, _ = run_cli(capsys, "repository", "status", "--repo", str(folder.root))
    assert code == 0
    [row] = [line for line in text.splitlines() if line.startswith("waiting for review:")]
    assert f"#{pr['number']} {pr['html_url']}: {held[:12]} \"harness: persona\"" in row and "protected" in row
    data = json.loads(run_cli(capsys, "repository", "status", "--json", "--repo", str(folder.root))[1])
    [waiting] = data["waiting_for_review"]
    assert waiting["number"] == pr["number"] and waiting["commits"][0]["commit"] == held

    # The harness goes on: an allowed commit lands; the held one still waits.
    tea = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    out = follow_once(folder.root, capsys)
    assert forge_main(url) == tea and "pushed 1 commit" in out

    # A person merges the pull request on the forge: it reaches the folder, and nothing waits.
    api(localhub, "PUT", f"/pulls/{pr['number']}/merge", merge_method="merge")
    out = follow_once(folder.root, capsys)
    assert "fast-forwarded main" in out and f"pull request #{pr['number']} was merged" in out
    assert (folder.root / PERSONA).read_text() == note("I am Ada, and I obey no one.")
    assert "Likes tea." in (folder.root / HUMAN).read_text()
    data = json.loads(run_cli(capsys, "repository", "status", "--json", "--repo", str(folder.root))[1])
    assert data["waiting_for_review"] == []
    assert git(folder.root, "for-each-ref", "refs/memrepo/held") == ""


def test_allowed_commits_around_a_held_one_land_and_the_held_one_waits(  # type: ignore[no-untyped-def]
        localhub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, folder = hub_memory(localhub, tmp_path)
    follow_once(folder.root, capsys)
    first = harness_commit(folder.root, HUMAN, note("Likes tea."), "harness: tea")
    harness_commit(folder.root, "reference/web.md", note("From a page."),
                   "harness: what the page said\n\nSource: external:web:https://x.example")
    harness_commit(folder.root, "reference/b.md", note("B."), "harness: b")

    out = follow_once(folder.root, capsys)
    main = forge_main(url)
    assert git(folder.root, "rev-parse", "HEAD").strip() == main
    assert git(folder.root, "log", "--format=%s", "-3", main).splitlines()[:2] == ["harness: b", "harness: tea"]
    assert git(folder.root, "rev-parse", "HEAD~1").strip() == first  # commits before the held one keep their sha
    assert not (folder.root / "reference/web.md").exists()
    assert "outside the conversation (external:web:https://x.example)" in out
    [pr] = api(localhub, "GET", "/pulls").json()
    assert sorted(label["name"] for label in pr["labels"]) == sorted([LABEL_AGENT_EDIT, LABEL_UNTRUSTED])
    commits = api(localhub, "GET", f"/pulls/{pr['number']}/commits").json()
    [only] = commits
    assert "Source: external:web:https://x.example" in only["commit"]["message"]
    assert only["commit"]["author"]["email"] == "a1@agents.memrepo"
    assert [f["filename"] for f in api(localhub, "GET", f"/pulls/{pr['number']}/files").json()] == ["reference/web.md"]


def test_follow_once_exits_1_when_a_held_commits_pull_request_cannot_be_opened(  # type: ignore[no-untyped-def]
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A remote without a forge (a bare repository) takes allowed commits, but no pull request:
    the held commit stays off main, kept on its ref, and `--once` says so with exit code 1."""
    from bot.memfs import sync
    from bot.memfs.create import init_repository

    remote = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    sync.set_remote(folder, str(remote))
    before = folder.head_sha()
    held = harness_commit(folder.root, PERSONA, note("I am Ada, and I obey no one."), "harness: persona")

    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(folder.root))
    assert (code, err) == (1, ""), out + err
    assert f"commits held back from main ({held[:12]} \"harness: persona\")" in out
    assert "opening their pull request failed" in out
    assert git(tmp_path, "--git-dir", str(remote), "rev-parse", "main").strip() == before
    [ref] = git(folder.root, "for-each-ref", "--format=%(refname)", "refs/memrepo/held").split()
    assert git(folder.root, "rev-parse", ref).strip() == held
