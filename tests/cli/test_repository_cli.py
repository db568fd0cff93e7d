"""`memrepo repository set|status|unset|sync` through bot.cli.main: output, exit codes, and
errors as one line without a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot import cli, identity
from bot.memfs import sync
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import localhub_token, run_cli

HUMAN = "---\ndescription: what I know about the person\n---\nName: Sam\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def new_memory(path: Path) -> MemoryRepo:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "system").mkdir()
    (path / "system/persona.md").write_text("---\ndescription: who I am\n---\nAgent.\n")
    (path / "system/human.md").write_text(HUMAN)
    (path / ".memrepo").mkdir()
    (path / ".memrepo/config.yml").write_text("")
    git(path, "add", "-A")
    git(path, "-c", "user.name=init", "-c", "user.email=init@example.com", "commit", "-q",
        "-m", f"Initial memory ({path.name})")
    return MemoryRepo.open(path)


def new_bare(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    git(path, "config", "receive.denyNonFastForwards", "true")
    return path


def append(repo: MemoryRepo, line: str, path: str = "system/human.md") -> str:
    head = repo.head_sha()
    text = repo.read(path, head).decode() + line + "\n"
    return repo.commit({path: text.encode()}, f"add {line}", identity.agent("a1"), parent=head)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "repository", *argv)


def assert_one_line_error(err: str) -> None:
    assert err.startswith("memrepo: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_set_status_sync_unset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote = new_bare(tmp_path / "r.git")
    a = new_memory(tmp_path / "a")
    code, out, err = run(capsys, "set", str(remote), "--repo", str(a.root))
    assert code == 0 and err == ""
    hook = a.root / ".git/hooks/pre-push"
    assert out == (f"connected to {remote}: pushed main (1 commit) to the empty remote\n"
                   f"pre-push guard installed ({hook}): a push of main that would add a commit the policy keeps "
                   "for review is refused, and memrepo follow opens its pull request\n")

    code, out, _ = run(capsys, "status", "--repo", str(a.root))
    assert code == 0
    lines = out.splitlines()
    labels = [line.split(":", 1)[0] for line in lines]
    assert labels == ["remote", "head", "ahead", "behind", "last sync", "backups", "follower"]
    starts = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in lines}
    assert len(starts) == 1  # values aligned in one column
    assert lines[0].endswith(str(remote))
    assert "0 commits not pushed" in lines[2]

    code, out, _ = run(capsys, "sync", "--repo", str(a.root))
    assert code == 0 and out.startswith("in sync with") and out.count("\n") == 1

    b_root = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b_root))
    append(MemoryRepo.open(b_root), "from B")
    code, out, _ = run(capsys, "sync", "--repo", str(b_root))
    assert code == 0 and out.startswith("pushed 1 commit ")
    code, out, _ = run(capsys, "sync", "--repo", str(a.root))
    assert code == 0 and out.startswith("fast-forwarded main by 1 commit ")
    assert "from B" in (a.root / "system/human.md").read_text()

    code, out, _ = run(capsys, "unset", "--repo", str(a.root))
    assert code == 0 and out == f"disconnected from {remote}\n"
    code, out, _ = run(capsys, "status", "--repo", str(a.root))
    assert code == 0 and "none (connect one with" in out.splitlines()[0]
    code, out, err = run(capsys, "sync", "--repo", str(a.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "not connected to a remote" in err


def test_sync_unreachable_and_conflict_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = new_bare(tmp_path / "r.git")
    a = new_memory(tmp_path / "a")
    assert run(capsys, "set", str(remote), "--repo", str(a.root))[0] == 0
    b_root = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b_root))
    b = MemoryRepo.open(b_root)

    append(a, "queued")
    remote.rename(tmp_path / "away.git")
    code, out, err = run(capsys, "sync", "--repo", str(a.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "not synced (remote unreachable:" in err
    (tmp_path / "away.git").rename(remote)
    assert run(capsys, "sync", "--repo", str(a.root))[0] == 0

    head = b.head_sha()
    b.commit({"system/human.md": HUMAN.replace("Sam", "Samuel").encode()}, "rename", identity.agent("b1"),
             parent=head)
    code, out, err = run(capsys, "sync", "--repo", str(b_root))
    assert code == 1
    assert_one_line_error(err)
    assert "system/human.md" in err and "refs/memrepo/backup/" in err
    code, out, _ = run(capsys, "status", "--repo", str(b_root))
    [aside] = [line for line in out.splitlines() if line.startswith("Set aside:")]
    assert "refs/memrepo/backup/" in aside


def test_set_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_memory(tmp_path / "m")
    code, _, err = run(capsys, "set", str(tmp_path / "missing.git"), "--repo", str(repo.root))
    assert code == 1
    assert_one_line_error(err)
    assert "cannot reach" in err
    code, _, err = run(capsys, "set", "has space", "--repo", str(repo.root))
    assert code == 1
    assert_one_line_error(err)
    code, _, err = run(capsys, "status", "--repo", str(tmp_path / "nowhere"))
    assert code == 1
    assert_one_line_error(err)
    with pytest.raises(SystemExit) as caught:
        cli.main(["repository"])
    assert caught.value.code == 2


def test_status_redacts_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_memory(tmp_path / "m")
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123"
    repo.git.remotes.create("origin", f"https://x-access-token:{secret}@127.0.0.1:9/o/memory.git")
    code, out, err = run(capsys, "status", "--fetch", "--repo", str(repo.root))
    assert code == 0
    assert secret not in out + err
    assert "https://***@127.0.0.1:9/o/memory.git" in out.splitlines()[0]
    assert "fetch failed" in out
    code, out, err = run(capsys, "sync", "--repo", str(repo.root))
    assert code == 1 and secret not in out + err
    code, out, err = run(capsys, "unset", "--repo", str(repo.root))
    assert code == 0 and secret not in out and "***@" in out
    assert sync.remote_url(repo) is None


# ----------------------------------------------------------------- set joins a remote that moved
def hub_memory(localhub, name: str = "memory") -> str:  # type: ignore[no-untyped-def]
    """An empty repository of alice's on localhub: its git URL, with her token in it."""
    import requests

    token = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": name},
                  headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    return localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/alice/{name}.git"


def remote_main(url: str) -> str:
    return git(Path.cwd(), "ls-remote", url, "refs/heads/main").split("\t", 1)[0]


def moved_apart(tmp_path: Path, url: str) -> tuple[MemoryRepo, MemoryRepo]:
    """A folder that pushed to `url` without being connected (as Letta's post-commit hook does),
    and a teammate's clone that has since moved the remote's main on: both have commits of
    their own, on a common history."""
    folder = new_memory(tmp_path / "folder")
    git(folder.root, "push", "-q", url, "main:main")
    git(tmp_path, "clone", "-q", url, str(tmp_path / "teammate"))
    teammate = MemoryRepo.open(tmp_path / "teammate")
    return folder, teammate


def test_set_joins_histories_that_moved_apart(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = hub_memory(localhub)
    folder, teammate = moved_apart(tmp_path, url)
    append(teammate, "From the forge.", path="system/persona.md")
    git(teammate.root, "push", "-q", "origin", "main")
    theirs = teammate.head_sha()
    append(folder, "Local one.")
    append(folder, "Local two.")
    local = folder.head_sha()

    code, out, err = run(capsys, "set", url, "--repo", str(folder.root))
    assert code == 0 and err == "", err
    assert out.startswith("connected to http://***@") and "replayed 2 local commits onto the remote's main" in out
    assert "token" not in out.split("***@", 1)[0]
    head = folder.head_sha()
    assert remote_main(url) == head and head != local
    assert folder.git.descendant_of(head, theirs)  # nothing forced over the forge's commit
    assert [c.message.splitlines()[0] for c in folder.git.walk(head)][:3] == [
        "add Local two.", "add Local one.", "add From the forge."]
    human = (folder.root / "system/human.md").read_text()
    assert "Local one." in human and "Local two." in human
    assert "From the forge." in (folder.root / "system/persona.md").read_text()
    assert folder.dirty_paths() == [] and sync.backups(folder) == []
    code, out, _ = run(capsys, "sync", "--repo", str(folder.root))
    assert code == 0 and out.startswith("in sync with")


def test_set_sets_aside_what_still_conflicts_and_says_so(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    url = hub_memory(localhub)
    folder, teammate = moved_apart(tmp_path, url)
    head = teammate.head_sha()
    teammate.commit({"system/human.md": HUMAN.replace("Sam", "Samuel").encode()}, "Samuel", identity.agent("b1"),
                    parent=head)
    git(teammate.root, "push", "-q", "origin", "main")
    clash = folder.commit({"system/human.md": HUMAN.replace("Sam", "Sammy").encode()}, "Sammy",
                          identity.agent("a1"), parent=folder.head_sha())
    append(folder, "Fine.", path="system/persona.md")

    code, out, err = run(capsys, "set", url, "--repo", str(folder.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "connected to" in err and "replayed 1 local commit" in err
    assert f"Commit {clash[:12]} \"Sammy\" was NOT saved to main" in err and "refs/memrepo/backup/" in err
    assert remote_main(url) == folder.head_sha()
    assert "Samuel" in (folder.root / "system/human.md").read_text()
    assert "Fine." in (folder.root / "system/persona.md").read_text()
    [aside] = sync.set_aside_commits(folder)
    assert aside.commit == clash and "changed differently on both sides" in aside.reason  # kept, not lost
    assert sync.remote_url(folder) == url
    code, out, _ = run(capsys, "status", "--repo", str(folder.root))
    assert code == 0 and clash[:12] in out


def test_set_refuses_an_unrelated_history_and_changes_nothing(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = hub_memory(localhub)
    moved_apart(tmp_path, url)
    before = remote_main(url)
    other = new_memory(tmp_path / "other")
    append(other, "Of its own.")
    local = other.head_sha()
    code, out, err = run(capsys, "set", url, "--repo", str(other.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "no commit in common" in err and "nothing was changed" in err
    assert (sync.remote_url(other), other.head_sha(), sync.backups(other)) == (None, local, [])
    assert remote_main(url) == before


def test_a_clone_synced_against_another_localhub_names_its_data_and_the_way_out(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two localhubs on one port: the clone's token was made by the first (its data folder), the
    second answers now and refuses it. libgit2 says only that authentication is required; the
    error names the data folder of the localhub that refused (its `X-Localhub-Data`) and both
    ways out."""
    from localhub.server import LocalhubServer

    with LocalhubServer(tmp_path / "one") as one, LocalhubServer(tmp_path / "two") as two:
        token = localhub_token(one, "ada")
        a = new_memory(tmp_path / "a")
        url = two.url.replace("http://", f"http://x-access-token:{token}@") + "/ada/memory.git"
        code, out, err = run(capsys, "set", url, "--repo", str(a.root))  # git's own words: authentication failed
        assert code == 1 and out == ""
        assert_one_line_error(err)
        assert f"it keeps its data in {tmp_path / 'two'}" in err and token not in err
        git(a.root, "remote", "add", "origin", url)  # the clone as made against the first localhub
        code, out, err = run(capsys, "sync", "--repo", str(a.root))  # libgit2's: no callback set
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "no callback set" not in err and token not in err
    assert f"the localhub at {two.url} refused this clone's token" in err
    assert f"it keeps its data in {tmp_path / 'two'}" in err
    assert "start the localhub whose data folder made the token" in err
    assert f"memrepo localhub create-repo ada/memory --url {two.url} --data {tmp_path / 'two'} --new-token" in err


@pytest.mark.parametrize(("url", "base", "repo"), [
    ("http://x-access-token:SECRET@127.0.0.1:8080/ada/memory.git", "http://127.0.0.1:8080", "ada/memory"),
    ("http://x-access-token:SECRET@[::1]:8080/ada/memory", "http://[::1]:8080", "ada/memory"),
    ("https://localhost/", "https://localhost", "OWNER/NAME"),
])
def test_a_localhubs_refusal_names_it_without_the_token(url: str, base: str, repo: str) -> None:
    from bot.memfs.sync.transport import refused_by_localhub

    said = refused_by_localhub(url, "/data/two")
    assert "SECRET" not in said and f"the localhub at {base} refused" in said
    assert f"create-repo {repo} --url {base} --data /data/two --new-token" in said
