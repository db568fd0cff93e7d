"""What the tests and benchmarks that put memory on localhub share: the repository's name, a
retry policy quick enough for a test (a fault is retried in tenths of a second, and an
operation gives up within 15 s), and a dream pull request's body and commit as the dreamer
writes them, and such a pull request opened from a clone. Benchmarks import this module too
(they put the project root on sys.path)."""

from __future__ import annotations

from pathlib import Path

from bot.contracts import LABEL_DREAM
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest
from bot.pullrequest.provenance import Change, Provenance, TranscriptRange, render_provenance

REPO = "alice/memory"
FAST = RetryPolicy(max_total_seconds=15.0, max_attempts=6, backoff_base=0.05, backoff_cap=0.5)


def dream_body(dream_id: str, base: str, path: str) -> str:
    """A dream pull request's body: a line of prose, then the provenance block the integrator
    reads (agent a1, conversation c1, one change to `path` from message m_1)."""
    provenance = Provenance(
        dream_id=dream_id, agent_id="a1", conversation_id="c1", base_commit=base, trigger="manual",
        strategy="verbatim", model=None,
        transcript=TranscriptRange("m_1", "m_2", "2026-03-14T09:00:01Z", "2026-03-14T09:00:02Z", 2),
        changes=(Change(path, "recorded what was said", ("m_1",)),))
    return "A dream.\n\n" + render_provenance(provenance)


def as_dreamer(dream_id: str, title: str) -> list[str]:
    """`git` arguments that commit as the dreamer of `dream_id` does (its identity and its
    `Dream-ID` trailer): `git(clone, *as_dreamer(id, "dream: x"))`. The integrator treats a
    dream branch whose commits are not the dream's as a person's pull request."""
    return ["-c", "user.name=memrepo dreamer", "-c", f"user.email={dream_id}@dreams.memrepo",
            "commit", "-qm", f"{title}\n\nDream-ID: {dream_id}\nAgent-ID: a1\n"]


def open_dream(api: str, token: str, clone: Path, path: str, text: str) -> tuple[ForgeClient, int]:
    """A dream's pull request on REPO with one change (`path` written with `text`), committed in
    `clone` as a teammate's dreamer does and pushed from it: a client with `token`, and its number."""
    from tests.conftest import git  # here: benchmarks import this module without pytest

    base = git(clone, "rev-parse", "HEAD").strip()
    dream_id = "20260314T090001Z-00000001"
    branch = f"memrepo/dream/{dream_id}"
    git(clone, "checkout", "-q", "-b", branch)
    (clone / path).parent.mkdir(parents=True, exist_ok=True)
    (clone / path).write_text(text)
    git(clone, "add", "-A")
    git(clone, *as_dreamer(dream_id, "dream: facts"))
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    client = ForgeClient(REPO, TokenCredentials(token), base_url=api, policy=FAST, min_write_interval=0.0, timeout=10)
    pull = client.open_pull_request(NewPullRequest(head=branch, base="main", title=f"Dream {dream_id}",
                                                   body=dream_body(dream_id, base, path), labels=(LABEL_DREAM,)))
    return client, pull.number
