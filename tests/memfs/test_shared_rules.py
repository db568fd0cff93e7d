"""Shared memory's decisions as tables (names, attachments, addresses, projection roots, the
record, which memory a call addresses), and its refusals against real git repositories and a
real localhub: each one line, nothing half attached."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import github
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.agent.routing import Route
from bot.agent.shared import shared_route, split_call
from bot.contracts import LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from bot.errors import MemrepoError
from bot.memfs import MemoryRepo, parse_call, sync
from bot.memfs import shared_projection as shared
from bot.memfs.create import init_repository
from bot.memfs.shared.record import (
    Attachment,
    address,
    attach_problem,
    name_problem,
    parse_record,
    projection_label,
    projection_root,
    render_record,
    url_key,
)
from tests.conftest import git, localhub_token, run_cli


# ------------------------------------------------------------------------------ pure rules
@pytest.mark.parametrize(("name", "ok"), [
    ("team", True), ("team-notes_2.v1", True), ("a" * 64, True),
    ("", False), (".", False), ("..", False), ("memory", False), ("MEMORY", False), ("a" * 65, False),
    ("bad name", False), ("a/b", False), ("équipe", False), ("team\n", False),
])
def test_a_name_is_a_folder_name_letta_accepts(name: str, ok: bool) -> None:
    assert (name_problem(name) is None) is ok


ATTACHED = (Attachment("team", "https://github.com/acme/team.git"),)


@pytest.mark.parametrize(("name", "url", "refused"), [
    ("other", "https://github.com/acme/other.git", None),
    ("team", "https://github.com/acme/other.git", "already attached"),
    ("Team", "https://github.com/acme/other.git", "already attached"),
    ("other", "https://github.com/acme/team", "already attached as team"),
    ("other", "https://x-access-token:t@GitHub.com/acme/team.git/", "already attached as team"),
    ("own", "https://github.com/acme/memory.git", "own memory"),
    ("bad name", "https://github.com/acme/other.git", "not a valid folder name"),
])
def test_attaching_refuses_a_name_or_a_repository_in_use(name: str, url: str, refused: str | None) -> None:
    problem = attach_problem(ATTACHED, name, url, own_url="https://github.com/acme/memory")
    assert (problem is None) if refused is None else (refused in (problem or ""))


@pytest.mark.parametrize(("memory", "root", "label"), [
    ("/home/u/.letta/agents/agent-1/memory", "/home/u/.letta/agents/agent-1/team", "$MEMORY_DIR/../team"),
    ("/home/u/notes/memory", "/home/u/notes/memory.shared/team", "$MEMORY_DIR/../memory.shared/team"),
    ("/work/ada", "/work/ada.shared/team", "$MEMORY_DIR/../ada.shared/team"),
])
def test_the_projection_root_is_lettas_for_a_letta_memory_and_beside_the_clone_otherwise(
        memory: str, root: str, label: str) -> None:
    assert projection_root(Path(memory), "team") == Path(root)
    assert projection_label("$MEMORY_DIR", Path(memory), "team") == label


@pytest.mark.parametrize(("path", "found"), [
    ("shared/team/runbooks/deploys.md", ("team", "runbooks/deploys.md")),
    ("shared/team", ("team", "")),
    ("shared/other/x.md", None),  # not attached: the agent's own folder named shared/
    ("notes/shared/team/x.md", None),
    ("system/persona.md", None),
])
def test_an_address_names_an_attached_shared_memory_or_the_agents_own(path: str, found: object) -> None:
    assert address(path, {"team"}) == found


def test_a_call_is_made_in_the_memory_its_paths_address() -> None:
    call = parse_call({"command": "rename", "old_path": "shared/team/a.md", "new_path": "shared/team/b.md"})
    name, inner = split_call(call, {"team"}) or ("", call)
    assert name == "team" and inner.args["old_path"] == "a.md" and inner.args["new_path"] == "b.md"
    assert split_call(parse_call({"command": "view", "path": "system/persona.md"}), {"team"}) is None
    with pytest.raises(MemrepoError, match="between memories"):
        split_call(parse_call({"command": "rename", "old_path": "notes/a.md", "new_path": "shared/team/a.md"}),
                   {"team"})


@pytest.mark.parametrize(("route", "labels"), [
    (Route(True), (LABEL_AGENT_EDIT,)),
    (Route(False, (LABEL_AGENT_EDIT,), protected=("system/x.md",)), (LABEL_AGENT_EDIT,)),
    (Route(False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED), sources=("external:web",)),
     (LABEL_AGENT_EDIT, LABEL_UNTRUSTED)),
])
def test_an_edit_of_shared_memory_is_always_a_pull_request_keeping_every_reason(route: Route, labels: tuple) -> None:
    found = shared_route(route, "team")
    assert not found.direct and found.labels == labels and found.shared == "team"
    assert found.reasons[0].startswith("it changes shared memory team")
    assert set(route.reasons) <= set(found.reasons)


names = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}", fullmatch=True).filter(lambda n: n.lower() != "memory")


@given(st.lists(st.tuples(names, st.booleans()), unique_by=lambda t: t[0].lower(), max_size=5))
def test_the_record_reads_back_what_was_written(entries: list[tuple[str, bool]]) -> None:
    found = tuple(Attachment(name, f"https://forge.example/acme/{name}.git", read_only) for name, read_only in entries)
    assert parse_record(render_record(found)) == found
    assert len({url_key(a.url) for a in found}) == len(found)


@pytest.mark.parametrize("text", [
    "version: 2\nattached: []\n", "attached: []\n", "version: 1\nattached: {}\n",
    "version: 1\nattached:\n- name: team\n  url: u\n",
    "version: 1\nattached:\n- {name: a b, url: u, read_only: false}\n",
    "version: 1\nattached:\n- {name: a, url: u, read_only: false}\n- {name: b, url: u.git, read_only: true}\n",
    "version: [\n",
])
def test_a_broken_record_is_refused_naming_it(text: str) -> None:
    with pytest.raises(MemrepoError, match=r"\.memrepo/shared\.yml"):
        parse_record(text)


# ------------------------------------------------------------------------------ refusals, for real
def _published(tmp: Path, name: str, config: str | None = None) -> Path:
    """A memory made by `memrepo init` and pushed to a bare repository `<name>.git`; its path."""
    bare = tmp / f"{name}.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    memory = init_repository(tmp / name, "t0", "Team")
    if config is not None:
        (memory.root / ".memrepo" / "config.yml").write_text(config)
        git(memory.root, "add", "-A")
        git(memory.root, "commit", "-q", "--no-verify", "-m", "rules")
    sync.set_remote(memory, str(bare))
    return bare


def _untouched(memory: MemoryRepo, head: str | None) -> None:
    assert MemoryRepo.open(memory.root).head_sha() == head
    assert not (memory.root.parent / "memory.shared").exists()


def test_bad_input_is_one_line_and_attaches_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    head = memory.head_sha()
    team = _published(tmp_path, "team")
    broken = _published(tmp_path, "broken", "merge: sometimes\n")
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(empty))
    for argv, said in [
        (("shared", "attach", str(team), "--as", "bad name"), "not a valid folder name"),
        (("shared", "attach", str(team), "--as", "memory"), "not a valid folder name"),
        (("shared", "attach", str(broken)), "holds invalid rules"),
        (("shared", "attach", str(empty)), "holds no memory"),
        (("shared", "attach", "http://127.0.0.1:9/acme/team.git"), "cannot reach"),
        (("shared", "detach", "team"), "no shared memory named team"),
    ]:
        code, out, err = run_cli(capsys, *argv, "--repo", str(memory.root))
        assert code != 0 and out == "" and said in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err
        _untouched(memory, head)
    code, out, _ = run_cli(capsys, "shared", "attach", str(team), "--repo", str(memory.root))
    assert code == 0 and "attached" in out
    code, _, err = run_cli(capsys, "shared", "attach", str(team) + "/", "--as", "again", "--repo", str(memory.root))
    assert code != 0 and "already attached as team" in err
    assert [row.name for row in shared.rows(memory)] == ["team"]


def test_a_token_that_cannot_read_attaches_nothing_and_losing_access_removes_the_projection(
        localhub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    alice = localhub_token(localhub, "alice")
    bob = localhub_token(localhub, "bob")
    hub = github.Github(auth=github.Auth.Token(alice), base_url=localhub.api_url, retry=None)
    repo = hub.get_user().create_repo("team", private=True)
    team = init_repository(tmp_path / "team", "t0", "Team")
    url = f"{localhub.url}/alice/team.git"
    sync.set_remote(team, url.replace("http://", f"http://x-access-token:{alice}@"))
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    head = memory.head_sha()
    with pytest.raises(MemrepoError, match="cannot be read with this agent's forge token") as refused:
        shared.attach(memory, url, env={"MEMREPO_FORGE_TOKEN": bob})
    assert bob not in str(refused.value) and "\n" not in str(refused.value)
    _untouched(memory, head)

    repo.add_to_collaborators("bob", "pull")
    shared.attach(memory, url, env={"MEMREPO_FORGE_TOKEN": bob})
    assert shared.rows(memory)[0].head == team.head_sha()
    repo.remove_from_collaborators("bob")
    done = shared.sync_all(memory, env={"MEMREPO_FORGE_TOKEN": bob})
    assert not done[0].ok and "can no longer read" in done[0].line and bob not in done[0].line
    assert shared.rows(memory)[0].head is None
    assert not (memory.root.parent / "memory.shared" / "team").exists()


def test_a_commit_made_in_a_projection_is_never_pushed_to_the_shared_main(tmp_path: Path) -> None:
    team = _published(tmp_path, "team")
    before = git(tmp_path, "--git-dir", str(team), "rev-parse", "main").strip()
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    shared.attach(memory, str(team))
    projection = tmp_path / "memory.shared" / "team"
    (projection / "notes.md").write_text("---\ndescription: Pushed around review.\n---\n- x\n")
    git(projection, "add", "-A")
    git(projection, "commit", "-q", "--no-verify", "-m", "straight to main")
    done = shared.sync_all(memory)
    assert not done[0].ok and "pushes nothing to a shared memory's main" in done[0].line
    assert git(tmp_path, "--git-dir", str(team), "rev-parse", "main").strip() == before


def test_without_a_git_identity_attach_and_detach_refuse_in_one_line_and_change_nothing(
        tmp_path: Path, isolated_git: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    team = _published(tmp_path, "team")
    other = _published(tmp_path, "other")
    code, _, _ = run_cli(capsys, "shared", "attach", str(team), "--repo", str(memory.root))
    assert code == 0
    head = memory.head_sha()
    # A machine where git knows no one (git's library reads the home folder once per process,
    # so the command runs as a person runs it: a process of its own).
    bare = tmp_path / "bare-home"
    bare.mkdir()
    (bare / ".gitconfig").write_text('[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n')
    env = {**os.environ, "HOME": str(bare), "GIT_CONFIG_GLOBAL": str(bare / ".gitconfig"), "EMAIL": ""}
    for argv in (("attach", str(other)), ("detach", "team")):
        done = subprocess.run([sys.executable, "-m", "bot.cli", "shared", *argv, "--repo", str(memory.root)],
                              capture_output=True, text=True, env=env)
        err = done.stderr
        assert done.returncode != 0 and done.stdout == "" and len(err.strip().splitlines()) == 1, (argv, err)
        assert "git config --global user.name" in err and "Traceback" not in err and "internal error" not in err
        assert MemoryRepo.open(memory.root).head_sha() == head
    assert sorted(p.name for p in (tmp_path / "memory.shared").iterdir()) == ["team"]
    assert [row.name for row in shared.rows(memory)] == ["team"]
