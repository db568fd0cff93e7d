"""What the tests and benchmarks that put memory on localhub share: the repository's name, a
retry policy quick enough for a test (a fault is retried in tenths of a second, and an
operation gives up within 15 s), and a dream pull request's body and commit as the dreamer
writes them. Benchmarks import this module too (they put the project root on sys.path)."""

from __future__ import annotations

from bot.forge.retry import RetryPolicy
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
