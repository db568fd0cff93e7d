"""The pieces of a `memrepo why` report, as pure functions over plain data: who a commit's
author is, which pull request a merge commit names, what a dreamer's commit or a pull request's
provenance block says, and which transcript messages a change rests on.

Every field is filled from something that exists (a commit, a trailer, a forge answer, a
transcript row) or left empty with the reason; nothing is inferred beyond that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.contracts import AGENT_ID, BASE_COMMIT, CONVERSATION_ID, DREAM_ID, TRANSCRIPT_RANGE
from bot.identity import writer
from bot.memfs import iso
from bot.pullrequest.provenance import Provenance
from bot.trailers import trailer_map

_MERGE_PULL = re.compile(r"Merge pull request #(?P<number>[0-9]+) from (?P<branch>\S+)")
_RESOLUTION = re.compile(r"Merge (?P<base>[0-9a-f]{7,64}) into (?P<branch>\S+): conflicts resolved by memrepo")


def commit_data(sha: str, parents: Sequence[str], author_name: str, author_email: str, authored: int,
                committed: int, message: str, committer_email: str = "") -> dict[str, Any]:
    return {
        "sha": sha,
        "parents": list(parents),
        "author": {"name": author_name, "email": author_email},
        "role": writer(author_email, committer_email, message),
        "authored_at": iso(authored),
        "committed_at": iso(committed),
        "summary": message.split("\n", 1)[0],
        "message": message,
    }


def merged_pull_number(message: str) -> tuple[int, str] | None:
    """(number, `owner/branch`) from GitHub's default merge commit title, else None."""
    match = _MERGE_PULL.match(message)
    return None if match is None else (int(match.group("number")), match.group("branch"))


def resolution(message: str) -> dict[str, str] | None:
    """What an integrator's conflict resolution commit says it merged, else None."""
    match = _RESOLUTION.match(message)
    return None if match is None else {"base": match.group("base"), "branch": match.group("branch")}


def dream_from_trailers(message: str) -> dict[str, Any] | None:
    """A dreamer commit's own record of its dream; the trigger, strategy and which messages each
    change rests on are only in the pull request's provenance block (None here)."""
    found = trailer_map(message)
    if DREAM_ID not in found:
        return None
    first, _, last = found.get(TRANSCRIPT_RANGE, "").partition("..")
    return {
        "source": "trailers",
        "dream_id": found.get(DREAM_ID),
        "agent_id": found.get(AGENT_ID),
        "conversation_id": found.get(CONVERSATION_ID),
        "base_commit": found.get(BASE_COMMIT),
        "trigger": None,
        "strategy": None,
        "model": None,
        "transcript": {"first_message_id": first or None, "last_message_id": last or None,
                       "first_at": None, "last_at": None, "count": None},
        "change": None,
    }


def edit_from_trailers(message: str) -> dict[str, Any] | None:
    """What an agent's direct commit says of the turn it was made in (its trailers), else None."""
    found = trailer_map(message)
    if CONVERSATION_ID not in found:
        return None
    first, _, last = found.get(TRANSCRIPT_RANGE, "").partition("..")
    return {"agent_id": found.get(AGENT_ID), "conversation_id": found.get(CONVERSATION_ID),
            "transcript": {"first_message_id": first or None, "last_message_id": last or first or None},
            "change": None}


def said_by_the_user(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The messages of a turn a direct edit rests on: what the user said in it (all of the
    turn when the user said nothing there, so nothing is hidden)."""
    said = [dict(m) for m in messages if m.get("kind") == "user"]
    return said or [dict(m) for m in messages]


def dream_from_provenance(provenance: Provenance, path: str) -> dict[str, Any]:
    """The pull request's provenance, with the change that touched `path` (if it lists one)."""
    data = provenance.as_data()
    change = next((c for c in data["changes"] if c["path"] == path), None)
    return {
        "source": "pull_request",
        "dream_id": data["dream_id"],
        "agent_id": data["agent_id"],
        "conversation_id": data["conversation_id"],
        "base_commit": data["base_commit"],
        "trigger": data["trigger"],
        "strategy": data["strategy"],
        "model": data["model"],
        "transcript": data["transcript"],
        "change": change,
    }


def wanted_messages(dream: Mapping[str, Any]) -> tuple[list[str] | None, str | None, str | None]:
    """(the ids the change on this file names, or None; first and last id of the range): the
    messages to show are the change's own when the provenance lists them, else the range."""
    change = dream.get("change")
    transcript = dream.get("transcript") or {}
    ids = list(change["message_ids"]) if change and change.get("message_ids") else None
    return ids, transcript.get("first_message_id"), transcript.get("last_message_id")


def select_messages(rows: Sequence[Mapping[str, Any]], ids: Sequence[str] | None, first: str | None,
                    last: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """(the messages, the ids asked for that the transcript does not have). With `ids`, those
    messages in transcript order; otherwise every message from `first` to `last` inclusive."""
    by_id = {row["message_id"]: i for i, row in enumerate(rows)}
    if ids is not None:
        found = sorted(by_id[i] for i in set(ids) if i in by_id)
        missing = [i for i in ids if i not in by_id]
        return [_message(rows[i]) for i in found], missing
    missing = [i for i in (first, last) if i is not None and i not in by_id]
    if first is None or last is None or missing:
        return [], missing
    lo, hi = by_id[first], by_id[last]
    return [_message(row) for row in rows[lo: hi + 1]], []


def select_quoted(quoted: Mapping[str, Mapping[str, Any]], ids: Sequence[str] | None
                  ) -> tuple[list[dict[str, Any]], list[str]]:
    """(the messages, the ids asked for that are not quoted) from what a pull request's
    description quotes: with `ids`, those in the order quoted; otherwise every quoted message
    (a range cannot be told apart without the transcript, and the description quotes only what
    the change rests on)."""
    if ids is None:
        return [dict(m) for m in quoted.values()], []
    wanted = set(ids)
    return [dict(m) for key, m in quoted.items() if key in wanted], [i for i in ids if i not in quoted]


def _message(row: Mapping[str, Any]) -> dict[str, Any]:
    return {key: row.get(key) for key in ("message_id", "captured_at", "kind", "source", "text")}


def pull_request_from_forge(pr: Any, reviews: Sequence[Any] | None) -> dict[str, Any]:
    """A forge PullRequest (and its reviews) as plain data."""
    return {
        "source": "forge",
        "number": pr.number,
        "url": pr.url or None,
        "title": pr.title,
        "state": pr.state,
        "merged": pr.merged,
        "author": pr.author or None,
        "head_ref": pr.head_ref or None,
        "merge_commit": pr.merge_commit_sha,
        "labels": list(pr.labels),
        "reviews": None if reviews is None else [
            {"reviewer": r.author, "state": r.state, "submitted_at": r.submitted_at, "commit": r.commit_id}
            for r in reviews],
    }


def pull_request_from_git(number: int, branch: str, merge_commit: str) -> dict[str, Any]:
    """What the merge commit's title says; everything else only the forge knows."""
    return {"source": "git", "number": number, "url": None, "title": None, "state": "closed", "merged": True,
            "author": None, "head_ref": branch.split("/", 1)[1] if "/" in branch else branch,
            "merge_commit": merge_commit, "labels": None, "reviews": None}
