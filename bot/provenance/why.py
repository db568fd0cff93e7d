"""Why a line is in memory: the chain of evidence from a line to the commit that wrote it, the
pull request it came through (with its reviews), the dream that proposed it and the transcript
messages the dream rests on. The stable entry points (the CLI, the MCP server and the palace
call them; the report is plain JSON-ready data with a `version`):

    why(repo_root, path, line=None, *, forge=None, transcripts=None) -> dict
    render_why(report) -> str

This sits above the memory core because it needs the forge, the dreams' provenance and the
transcripts as well as git. Exit codes (`details["exit_code"]` of the errors, which the CLI
returns): 5 a path that is not a file in memory, 6 a line the file does not have.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2
import pygit2

from bot import texts as shared_texts
from bot.errors import MemrepoError
from bot.forge.errors import unreachable
from bot.memfs import (
    REPORT_VERSION,
    MemoryRepo,
    blame,
    file_path,
    main_landings,
    main_ref,
    main_timeline,
    ref_name,
    shared_projection,
    timeline,
)
from bot.provenance import evidence, texts
from bot.provenance.quoted import quoted_messages
from bot.provenance.sources import Sources, unasked
from bot.pullrequest.provenance import EDIT_TRIGGER, ProvenanceError, parse_provenance
from bot.templating import environment
from bot.texts import Text

HISTORY_NO_SUCH_LINE = Text("{path} has {count:|line|lines} {where}; there is no line {line}")
HISTORY_FORGE_UNREACHABLE = ("the forge of {repository} could not be reached (check that it is running and that "
                             "origin names it); what git records is shown")
HISTORY_PROVENANCE_UNREADABLE = "the pull request's provenance block cannot be read ({problem}); the commit's " \
                                "trailers are shown"
HISTORY_PROVENANCE_OTHER = "the pull request's provenance is for dream {dream}, not this commit's; the commit's " \
                           "trailers are shown"

EXIT_NO_SUCH_LINE = 6


class NoSuchLineError(MemrepoError):
    """The file has no such line (exit code 6)."""


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def why(repo_root: str | os.PathLike[str], path: str, line: int | None = None, *, forge: Any = None,
        transcripts: Any = None, unasked_forge: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The chain of evidence for line `line` (from 1) of `path` as main's tip has it; without
    `line`, for every line of the file, lines written by the same commit sharing one origin.

    For each origin: the commit that wrote the line(s) (blame follows merges, so a line that
    came through a pull request is the branch commit's), how it reached main (`landed`: itself,
    or the first-parent merge that brought it in), the pull request where there was one, the
    dream's provenance for dreamer commits and integrator conflict resolutions, and the
    transcript messages that provenance names. A person's or agent's direct commit has no pull
    request, dream or transcript, and none is made up.

    `forge`: None finds it the usual way (origin's URL and the agent's credential in
    bot.agent_credential's order, as dreams do); False never asks; or any object with ForgeClient's
    `pull_requests_for_commit(sha)` and `list_reviews(number)`; `unasked_forge`, with False, is
    what the report says of the forge when it is needed (default: not asked, --no-forge). Only
    commits that reached main through a merge are asked about. Without a forge, the merge
    commit's title gives the pull request's number and the dreamer commit's trailers the dream;
    the report says why the forge was not asked. `transcripts`: None opens the TranscriptStore of the usual home
    ($MEMREPO_HOME, ...); False never reads one; or any object with TranscriptStore's
    `read(agent_id, conversation_id)`. A transcript that is not there is reported as such.

    Raises PathNotInMemoryError (5), NoSuchLineError (6).
    """
    repo = MemoryRepo.open(repo_root)
    repo, path = shared_projection.in_shared_memory(repo, path)
    ref, tip = main_ref(repo)
    where = texts.HISTORY_WHERE_MAIN.format(ref=ref_name(ref), sha=tip[:10])
    found = file_path(repo, tip, path, where)
    count = _line_count(repo.read(found, tip) or b"")
    if line is not None and not 1 <= line <= count:
        text = "{path} is empty {where}; there is no line {line}" if count == 0 else HISTORY_NO_SUCH_LINE
        raise NoSuchLineError(text.format(path=found, line=line, count=count, where=where),
                              exit_code=EXIT_NO_SUCH_LINE)
    blamed = blame(repo, tip, found, line) if count else []
    chain = main_timeline(repo, ref, tip)
    landings = main_landings(repo, ref, chain)
    sources = Sources(repo, forge, transcripts, unasked_forge)
    try:
        origins: dict[str, dict[str, Any]] = {}
        lines = []
        for item in blamed:
            if item.sha not in origins:
                origins[item.sha] = _origin(repo, chain, landings, item.sha, found, sources)
            origins[item.sha]["lines"].append(item.line)
            lines.append({"line": item.line, "text": item.text, "commit": item.sha})
    finally:
        sources.close()
    return {
        "version": REPORT_VERSION,
        "ref": ref_name(ref),
        "head": tip,
        "path": found,
        "line": line,
        "line_count": count,
        "lines": lines,
        "origins": list(origins.values()),
        "forge": sources.forge_status or unasked("the forge was not asked: no line came through a merge"),
    }


def _commit(repo: MemoryRepo, sha: str) -> dict[str, Any]:
    c = repo.git[sha].peel(pygit2.Commit)
    return evidence.commit_data(sha, [str(p) for p in c.parent_ids], c.author.name, c.author.email, c.author.time,
                                c.commit_time, c.message, c.committer.email)


def _origin(repo: MemoryRepo, chain: timeline.Timeline, landings: timeline.Landings, sha: str, path: str,
            sources: Sources) -> dict[str, Any]:
    commit = _commit(repo, sha)
    writer = commit["role"]
    position = landings.position(sha)
    landed = None if position is None else _commit(repo, chain.sha(position))
    via = "direct" if landed is not None and landed["sha"] == sha else "merge" if landed else "unknown"
    origin: dict[str, Any] = {
        "commit": commit, "writer": writer, "lines": [], "via": via,
        "landed": None if landed is None else {k: landed[k] for k in ("sha", "committed_at", "summary", "role")},
        "pull_request": None, "forge_error": None, "resolution": None, "dream": None, "dream_note": None,
        "turn": None, "transcript": None,
    }
    if via == "merge":
        origin["pull_request"], origin["forge_error"] = _pull_request(sources, sha, landed)
    dream_commit: dict[str, Any] | None = commit if writer == "dreamer" else None
    if writer == "integrator":
        resolved = evidence.resolution(commit["message"])
        if resolved is not None:
            origin["resolution"] = {**resolved, "parents": commit["parents"]}
            first_parent = _commit(repo, commit["parents"][0]) if commit["parents"] else None
            if first_parent is not None and first_parent["role"] == "dreamer":
                dream_commit = first_parent
    if dream_commit is not None:
        origin["dream"], origin["dream_note"] = _dream(dream_commit, origin["pull_request"], path)
        if origin["dream"] is not None:
            origin["transcript"] = transcript_behind(origin["dream"], sources, origin["pull_request"])
    if writer == "agent":
        origin["turn"] = _edit_turn(commit["message"], origin["pull_request"], path)
        if origin["turn"] is not None:
            told = transcript_behind(origin["turn"], sources, origin["pull_request"])
            told["messages"] = evidence.said_by_the_user(told["messages"])
            origin["transcript"] = told
    if origin["pull_request"] is not None:
        origin["pull_request"].pop("body", None)
    return origin


def _pull_request(sources: Sources, sha: str, landed: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The pull request `sha` came through: the forge's answer, else the merge commit's title."""
    from_git = evidence.merged_pull_number(landed["message"])
    fallback = None if from_git is None else evidence.pull_request_from_git(from_git[0], from_git[1], landed["sha"])
    client = sources.forge()
    if client is None:
        return fallback, None
    try:
        pulls = client.pull_requests_for_commit(sha)
        chosen = next((p for p in pulls if p.merge_commit_sha == landed["sha"]), None)
        if chosen is None and from_git is not None:
            chosen = next((p for p in pulls if p.number == from_git[0]), None)
        if chosen is None:
            chosen = next((p for p in pulls if p.merged), None)
        if chosen is None:
            return fallback, None
        reviews = client.list_reviews(chosen.number)
    except MemrepoError as exc:
        if unreachable(exc):
            return fallback, HISTORY_FORGE_UNREACHABLE.format(repository=getattr(client, "repository", "?"))
        return fallback, f"the forge could not be asked ({exc}); what git records is shown"
    data = evidence.pull_request_from_forge(chosen, reviews)
    data["body"] = chosen.body
    return data, None


def _dream(commit: dict[str, Any], pull: dict[str, Any] | None, path: str) -> tuple[dict[str, Any] | None, str | None]:
    """The dream's provenance: the pull request's block when the forge gave it (and it is this
    dream's), else the commit's trailers."""
    from_trailers = evidence.dream_from_trailers(commit["message"])
    body = (pull or {}).get("body")
    if not body:
        return from_trailers, None
    try:
        provenance = parse_provenance(body)
    except ProvenanceError as exc:
        return from_trailers, HISTORY_PROVENANCE_UNREADABLE.format(problem=exc)
    if provenance is None:
        return from_trailers, "the pull request's description has no provenance block; the commit's trailers are shown"
    if from_trailers is not None and from_trailers["dream_id"] != provenance.dream_id:
        return from_trailers, HISTORY_PROVENANCE_OTHER.format(dream=provenance.dream_id)
    return evidence.dream_from_provenance(provenance, path), None


def _edit_turn(message: str, pull: dict[str, Any] | None, path: str) -> dict[str, Any] | None:
    """The turn an agent's commit was made in: its trailers' word; where they name no conversation
    (a harness's commits, whose turn was imported after their pull request opened, which then
    named it in its description), the pull request's provenance block, when it is an edit by
    the same agent."""
    from_trailers = evidence.edit_from_trailers(message)
    if from_trailers is not None and from_trailers.get("conversation_id"):
        return from_trailers
    try:
        provenance = parse_provenance((pull or {}).get("body"))
    except ProvenanceError:
        return from_trailers
    if (provenance is None or provenance.trigger != EDIT_TRIGGER or not provenance.conversation_id
            or (from_trailers is not None and from_trailers.get("agent_id") not in (None, provenance.agent_id))):
        return from_trailers
    return evidence.dream_from_provenance(provenance, path)


def transcript_behind(dream: dict[str, Any], sources: Sources, pull: dict[str, Any] | None) -> dict[str, Any]:
    """The messages the change rests on, from the transcript; where it cannot be read here, as
    the pull request's description quotes them (`quoted_from`: its number)."""
    agent, conversation = dream.get("agent_id"), dream.get("conversation_id")
    out: dict[str, Any] = {"agent_id": agent, "conversation_id": conversation, "available": False, "reason": None,
                           "messages": [], "missing": [], "quoted_from": None}
    if not agent or not conversation:
        out["reason"] = "the dream does not name its agent and conversation"
        return out
    ids, first, last = evidence.wanted_messages(dream)
    rows, reason = sources.read_transcript(agent, conversation)
    if rows is not None:
        out["messages"], out["missing"] = evidence.select_messages(rows, ids, first, last)
        out["available"] = True
        return out
    out["reason"] = reason
    if pull is not None and (quoted := quoted_messages(pull.get("body"))):
        out["messages"], out["missing"] = evidence.select_quoted(quoted, ids)
        out["quoted_from"] = pull["number"]
    return out


# ------------------------------------------------------------------------------------ rendering
def _ranges(numbers: list[int]) -> str:
    """1, 2, 3, 7 -> "1-3, 7"."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _when(stamp: str | None) -> str:
    return (stamp or "").replace("T", " ")


@cache
def _why_template() -> jinja2.Template:
    env = environment().overlay(trim_blocks=True, lstrip_blocks=True)
    env.filters.update(ranges=_ranges, when=_when, plural=shared_texts.plural)
    return env.get_template("history/why.txt.j2")


def render_why(report: dict[str, Any]) -> str:
    """The report of `why` as text for a person (templates/history/why.txt.j2)."""
    return _why_template().render(r=report).rstrip("\n") + "\n"
