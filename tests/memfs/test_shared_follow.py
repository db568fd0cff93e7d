"""Commits a harness makes inside a shared memory's projection (Letta Code's "edit files and
commit there"), on a real localhub over HTTP with real git: `memrepo follow` proposes them as a
pull request on the shared repository, under its policy and always for review, with the
provenance naming the agent and its own memory; the shared main never receives them, and the
pre-push guard follow puts in the projection refuses the harness's own push."""

from __future__ import annotations

import subprocess
from pathlib import Path

import github
import pytest

from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.memfs import MemoryRepo, sync
from bot.memfs import shared_projection as shared
from bot.memfs.create import init_repository
from bot.pullrequest.provenance import parse_provenance
from tests.conftest import LocalhubMemory, git, localhub_token, memory_on_localhub, run_cli
from tests.memory_forge import FAST

NOTE = "---\ndescription: Who is on call.\n---\n\n- Sam is on call this week.\n"


def _team(localhub, tmp: Path, writer: str, merge: str = "auto") -> tuple[str, MemoryRepo, str]:  # type: ignore[no-untyped-def]
    """carol/team, a memory whose policy says `merge`, `writer` a collaborator: (its URL, carol's
    clone, carol's token)."""
    token = localhub_token(localhub, "carol")
    repo = github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None).get_user()\
        .create_repo("team")
    repo.add_to_collaborators(writer, "push")
    team = init_repository(tmp / "carol" / "team", "t0", "Team")
    (team.root / ".memrepo" / "config.yml").write_text(f"merge: {merge}\n")
    git(team.root, "add", "-A")
    git(team.root, "commit", "-q", "--no-verify", "-m", "policy")
    url = f"{localhub.url}/carol/team.git"
    sync.set_remote(team, url.replace("http://", f"http://x-access-token:{token}@"))
    assert sync.push(team).pushed
    return url, team, token


def _commit_in(projection: Path, text: str) -> str:
    (projection / "oncall.md").write_text(text)
    git(projection, "add", "-A")
    git(projection, "commit", "-q", "-m", "on call: Sam")
    return git(projection, "rev-parse", "HEAD").strip()


def test_follow_proposes_a_projections_commits_on_the_shared_repository_and_never_pushes_them(
        localhub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
        capsys: pytest.CaptureFixture[str]) -> None:
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, LocalhubMemory)
    memory = world.memory
    try:
        assert sync.push(memory).pushed
        url, team, carol = _team(localhub, tmp_path, "alice")  # its policy lets agents merge at once
        shared.attach(memory, url, name="team", env={})
        code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(memory.root))
        assert code == 0, out + err
        projection = tmp_path / "memory.shared" / "team"
        shared_main = team.head_sha()
        own_main = memory.head_sha()

        # The harness edits and commits in the projection; its own push of main is refused.
        made = _commit_in(projection, NOTE)
        pushed = subprocess.run(["git", "push", "origin", "main"], cwd=projection, capture_output=True, text=True)
        assert pushed.returncode != 0 and "memrepo" in pushed.stderr, pushed.stderr

        # follow proposes it on carol/team; nothing reaches either main.
        code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(memory.root))
        assert code == 0 and "pull request #" in out and "team:" in out, out + err
        client = ForgeClient("carol/team", TokenCredentials(carol), base_url=localhub.api_url, policy=FAST,
                             min_write_interval=0.0, timeout=10)
        number = int(out.split("pull request #", 1)[1].split(" ", 1)[0])
        pr = client.get_pull_request(number)
        provenance = parse_provenance(pr.body)
        assert provenance is not None and provenance.agent_id == "a1"
        assert provenance.memory_repository == f"{localhub.url}/alice/memory.git"
        assert "on call: Sam" in pr.body and not pr.merged and pr.state == "open"
        assert sync.status(team, fetch=True).remote_head == shared_main
        assert MemoryRepo.open(memory.root).head_sha() == own_main
        assert git(projection, "rev-parse", "HEAD").strip() == shared_main
        assert git(projection, "rev-parse", f"refs/memrepo/shared-proposed/{number}").strip() == made
        assert not (projection / "oncall.md").exists()

        # A second pass proposes nothing again.
        code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(memory.root))
        assert code == 0 and "pull request #" not in out

        # The team closes it: the next pass forgets the commits it kept.
        github.Github(auth=github.Auth.Token(carol), base_url=localhub.api_url, retry=None).get_repo(
            "carol/team").get_pull(number).edit(state="closed")
        code, out, _ = run_cli(capsys, "follow", "--once", "--repo", str(memory.root))
        assert code == 0 and f"pull request #{number} on the shared memory was closed" in out, out
        assert git(projection, "for-each-ref", "refs/memrepo/shared-proposed/").strip() == ""
    finally:
        world.store.close()
