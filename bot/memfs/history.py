"""Provenance and time travel over memory's git history: `why` a line is in memory, and what
memory held `at` a moment. These are the stable entry points (the CLI and the MCP server call
them; the reports are plain JSON-ready data with a `version`):

    parse_when(text) -> datetime
    why(repo_root, path, line=None, *, forge=None, transcripts=None) -> dict
    render_why(report) -> str
    at(repo_root, when, path=None) -> dict

"main" is the clone's `refs/heads/main` (HEAD when there is no such branch); lines and files
are those of its committed tip, never the working tree. Exit codes (`details["exit_code"]` of
the errors, which the CLI returns): 3 a date that cannot be read, 4 a moment before main's
first commit, 5 a path that is not a file in memory, 6 a line the file does not have.
"""

from __future__ import annotations

import contextlib
import math
import os
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import pygit2

from bot import messages
from bot.config import CONFIG_PATH, DEFAULT_POLICY, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.identity import role_of
from bot.memfs import evidence, refs, timeline
from bot.memfs.blame import blame
from bot.memfs.compile import DEFAULT_MEMORY_DIR, compile_memory, compile_prompt, read_document
from bot.memfs.dates import EXIT_BAD_DATE, BadDateError, parse_when, parse_when_bound
from bot.memfs.repo import MAIN, MemoryRepo
from bot.templating import environment

__all__ = ["EXIT_BAD_DATE", "EXIT_BEFORE_HISTORY", "EXIT_NOT_IN_MEMORY", "EXIT_NO_SUCH_LINE", "REPORT_VERSION",
           "BadDateError", "BeforeHistoryError", "NoSuchLineError", "PathNotInMemoryError", "at", "commit_at",
           "compile_at",
           "parse_when", "parse_when_bound", "render_why", "why"]

REPORT_VERSION = 1
EXIT_BEFORE_HISTORY = 4
EXIT_NOT_IN_MEMORY = 5
EXIT_NO_SUCH_LINE = 6


class BeforeHistoryError(MemrepoError):
    """The moment is before main's first commit: memory did not exist yet (exit code 4)."""


class PathNotInMemoryError(MemrepoError):
    """The path is not a file of memory at the commit asked about (exit code 5)."""


class NoSuchLineError(MemrepoError):
    """The file has no such line (exit code 6)."""


# ------------------------------------------------------------------------------ main and its past
def _main(repo: MemoryRepo) -> tuple[str, str]:
    """(the ref read as main, its commit)."""
    name = f"refs/heads/{MAIN}"
    sha = refs.resolve(repo.root, name)
    if sha and repo.resolve(sha):
        return name, sha
    return "HEAD", repo.head_sha() or ""


def _timeline(repo: MemoryRepo, ref: str, tip: str) -> timeline.Timeline:
    dirs = refs.git_dirs(repo.root)
    common = dirs[1] if dirs else Path(repo.git.path)
    return timeline.load(repo.git, common, ref, tip)


def _seconds(when: datetime) -> int:
    """Whole seconds (commit times have no fraction): a commit made at 10:00:00 is included at
    10:00:00.5. A moment without a zone is UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return math.floor(when.timestamp())


def commit_at(repo: MemoryRepo, when: datetime) -> tuple[str, int, bool]:
    """(main's commit at `when`, its commit time, whether it is main's tip); main's first-parent
    history by commit time, as `git rev-list --first-parent --before=WHEN -1 main`."""
    ref, tip = _main(repo)
    line = _timeline(repo, ref, tip)
    position = line.at(_seconds(when))
    if position is None:
        first = min(line.times) if len(line) else 0
        raise BeforeHistoryError(messages.HISTORY_BEFORE_FIRST.format(
            when=_shown(when), first=evidence.iso(first), ref=_ref_name(ref)), exit_code=EXIT_BEFORE_HISTORY)
    return line.sha(position), line.times[position], position == len(line) - 1


def _shown(when: datetime) -> str:
    moment = when if when.tzinfo else when.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _ref_name(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def _file_path(repo: MemoryRepo, sha: str, raw: str, where: str) -> str:
    """The file `raw` names at `sha` (the `.md` may be left out, as the memory tool allows)."""
    text = raw.strip().replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    path = "/".join(parts)
    if not path or ".." in parts or text.startswith("/") or parts[0] == ".git":
        raise PathNotInMemoryError(messages.HISTORY_BAD_PATH.format(path=raw), exit_code=EXIT_NOT_IN_MEMORY)
    for candidate in (path, path + ".md"):
        if repo.read(candidate, sha) is not None:
            return candidate
    hint = messages.HISTORY_IS_FOLDER if repo.is_folder(path, sha) else ""
    raise PathNotInMemoryError(messages.HISTORY_NOT_IN_MEMORY.format(path=path, where=where, hint=hint),
                               exit_code=EXIT_NOT_IN_MEMORY)


# ------------------------------------------------------------------------------------------ at
def at(repo_root: str | os.PathLike[str], when: datetime, path: str | None = None) -> dict[str, Any]:
    """Memory as main held it at `when` (aware; naive means UTC): main's first-parent history
    by commit time, a commit made exactly at `when` included, main's tip after its last commit.

    Returns {"version", "when", "ref", "commit", "committed_at", "author", "role", "summary",
    "latest", "path"} and, with `path`, "text" and "size" (bytes) of that file; without,
    "files": [{"path", "size", "description"}] of every file (description from the
    frontmatter of markdown files, else ""). Raises BeforeHistoryError (4) before main's first
    commit, PathNotInMemoryError (5) when `path` is not a file then.
    """
    repo = MemoryRepo.open(repo_root)
    sha, _, latest = commit_at(repo, when)
    commit = repo.git[sha].peel(pygit2.Commit)
    report: dict[str, Any] = {
        "version": REPORT_VERSION,
        "when": _shown(when),
        "ref": _ref_name(_main(repo)[0]),
        "commit": sha,
        "committed_at": evidence.iso(commit.commit_time),
        "author": {"name": commit.author.name, "email": commit.author.email},
        "role": role_of(commit.author.email),
        "summary": commit.message.split("\n", 1)[0],
        "latest": latest,
        "path": None,
    }
    if path is not None:
        where = messages.HISTORY_WHERE_AT.format(when=_shown(when), sha=sha[:10])
        found = _file_path(repo, sha, path, where)
        data = repo.read(found, sha) or b""
        report.update(path=found, size=len(data), text=data.decode("utf-8", "replace"))
        return report
    files = []
    for name, blob in sorted(repo.paths(sha).items()):
        obj = repo.git[blob]
        description = read_document(obj.data).description if name.endswith(".md") else ""
        files.append({"path": name, "size": obj.size, "description": description})
    report["files"] = files
    return report


def compile_at(repo_root: str | os.PathLike[str], when: datetime, system_prompt: str = "", *,
               memory_dir: str = DEFAULT_MEMORY_DIR) -> dict[str, Any]:
    """The system prompt the agent would have had at `when`: memory at main's commit then,
    compiled as `memrepo compile` compiles HEAD (the limits of the policy of that commit; the
    default limits when it does not parse, as the prompt cache does).

    Returns {"version", "when", "commit", "committed_at", "latest", "text"}; raises as `at`.
    """
    repo = MemoryRepo.open(repo_root)
    sha, committed, latest = commit_at(repo, when)
    limits = DEFAULT_POLICY.limits
    config = repo.read(CONFIG_PATH, sha)
    if config is not None:
        with contextlib.suppress(PolicyError):
            limits = parse_policy(config.decode("utf-8", "replace")).limits
    text = compile_prompt(system_prompt, compile_memory(repo.files(sha), limits, memory_dir))
    return {"version": REPORT_VERSION, "when": _shown(when), "commit": sha, "committed_at": evidence.iso(committed),
            "latest": latest, "text": text}


# ----------------------------------------------------------------------------------------- why
class _Sources:
    """The forge and the transcript store of one `why` call, found once and only when needed."""

    def __init__(self, repo: MemoryRepo, forge: Any, transcripts: Any) -> None:
        self.repo = repo
        self._forge_arg = forge
        self._transcripts_arg = transcripts
        self._forge: Any = None
        self.forge_status: dict[str, Any] | None = None
        self._store: Any = None
        self._owned: list[Any] = []

    def forge(self) -> Any:
        """The forge client, or None (then `forge_status["reason"]` says why it is not asked)."""
        if self.forge_status is None:
            self._forge, self.forge_status = self._find_forge()
        return self._forge

    def _find_forge(self) -> tuple[Any, dict[str, Any]]:
        if self._forge_arg is False:
            return None, {"asked": False, "repository": None, "reason": messages.HISTORY_FORGE_DISABLED}
        if self._forge_arg is not None:
            return self._forge_arg, {"asked": True, "repository": getattr(self._forge_arg, "repository", None),
                                     "reason": None}
        from bot.dream.forge_target import forge_target
        from bot.forge.client import ForgeClient, RetryPolicy, TokenCredentials
        from bot.memfs.sync import remote_url

        url = remote_url(self.repo)
        if not url:
            return None, {"asked": False, "repository": None, "reason": messages.HISTORY_FORGE_NO_REMOTE}
        try:
            target = forge_target(url, os.environ)
        except MemrepoError:
            from bot.memfs.sync import redact
            return None, {"asked": False, "repository": None,
                          "reason": messages.HISTORY_FORGE_NOT_FORGE.format(url=redact(url))}
        if not target.token:
            return None, {"asked": False, "repository": target.repository,
                          "reason": messages.HISTORY_FORGE_NO_TOKEN.format(repository=target.repository)}
        client = ForgeClient(target.repository, TokenCredentials(target.token), base_url=target.api_url,
                             policy=RetryPolicy(max_total_seconds=20.0, max_attempts=3, backoff_base=0.2,
                                                backoff_cap=2.0), timeout=10, min_write_interval=0.0)
        self._owned.append(client)
        return client, {"asked": True, "repository": target.repository, "reason": None}

    def read_transcript(self, agent_id: str, conversation_id: str) -> tuple[list[dict[str, Any]] | None, str | None]:
        """(the conversation's rows, None) or (None, why they are not available here)."""
        if self._transcripts_arg is False:
            return None, messages.HISTORY_TRANSCRIPTS_DISABLED
        store = self._transcripts_arg
        if store is None:
            if self._store is None:
                from bot.transcript.store import TranscriptStore
                try:
                    self._store = TranscriptStore()
                except MemrepoError as exc:
                    return None, str(exc)
                self._owned.append(self._store)
            store = self._store
        try:
            rows = store.read(agent_id, conversation_id)
        except MemrepoError as exc:
            where = getattr(store, "home", None)
            return None, messages.HISTORY_TRANSCRIPT_MISSING.format(
                agent=agent_id, conversation=conversation_id, where=f" in {where}" if where else "", problem=exc)
        return [r.to_row() if hasattr(r, "to_row") else dict(r) for r in rows], None

    def close(self) -> None:
        for thing in self._owned:
            with contextlib.suppress(Exception):
                thing.close()


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def why(repo_root: str | os.PathLike[str], path: str, line: int | None = None, *, forge: Any = None,
        transcripts: Any = None) -> dict[str, Any]:
    """The chain of evidence for line `line` (from 1) of `path` as main's tip has it; without
    `line`, for every line of the file, lines written by the same commit sharing one origin.

    For each origin: the commit that wrote the line(s) (blame follows merges, so a line that
    came through a pull request is the branch commit's), how it reached main (`landed`: itself,
    or the first-parent merge that brought it in), the pull request where there was one, the
    dream's provenance for dreamer commits and integrator conflict resolutions, and the
    transcript messages that provenance names. A person's or agent's direct commit has no pull
    request, dream or transcript, and none is made up.

    `forge`: None finds it the usual way (origin's URL and MEMREPO_FORGE_TOKEN / GITHUB_TOKEN /
    the URL's token, as dreams do); False never asks; or any object with ForgeClient's
    `pull_requests_for_commit(sha)` and `list_reviews(number)`. Only commits that reached main
    through a merge are asked about. Without a forge, the merge commit's title gives the pull
    request's number and the dreamer commit's trailers the dream; the report says why the forge
    was not asked. `transcripts`: None opens the TranscriptStore of the usual home
    ($MEMREPO_HOME, ...); False never reads one; or any object with TranscriptStore's
    `read(agent_id, conversation_id)`. A transcript that is not there is reported as such.

    Raises PathNotInMemoryError (5), NoSuchLineError (6).
    """
    repo = MemoryRepo.open(repo_root)
    ref, tip = _main(repo)
    where = messages.HISTORY_WHERE_MAIN.format(ref=_ref_name(ref), sha=tip[:10])
    found = _file_path(repo, tip, path, where)
    count = _line_count(repo.read(found, tip) or b"")
    if line is not None and not 1 <= line <= count:
        text = messages.HISTORY_NO_LINES if count == 0 else messages.HISTORY_NO_SUCH_LINE
        raise NoSuchLineError(text.format(path=found, line=line, count=count, where=where),
                              exit_code=EXIT_NO_SUCH_LINE)
    blamed = blame(repo.root, tip, found, line) if count else []
    chain = _timeline(repo, ref, tip)
    sources = _Sources(repo, forge, transcripts)
    try:
        origins: dict[str, dict[str, Any]] = {}
        lines = []
        for item in blamed:
            if item.sha not in origins:
                origins[item.sha] = _origin(repo, chain, item.sha, found, sources)
            origins[item.sha]["lines"].append(item.line)
            lines.append({"line": item.line, "text": item.text, "commit": item.sha})
    finally:
        sources.close()
    return {
        "version": REPORT_VERSION,
        "ref": _ref_name(ref),
        "head": tip,
        "path": found,
        "line": line,
        "line_count": count,
        "lines": lines,
        "origins": list(origins.values()),
        "forge": sources.forge_status or {"asked": False, "repository": None,
                                          "reason": messages.HISTORY_FORGE_NOT_NEEDED},
    }


def _commit(repo: MemoryRepo, sha: str) -> dict[str, Any]:
    c = repo.git[sha].peel(pygit2.Commit)
    return evidence.commit_data(sha, [str(p) for p in c.parent_ids], c.author.name, c.author.email, c.author.time,
                                c.commit_time, c.message)


def _origin(repo: MemoryRepo, chain: timeline.Timeline, sha: str, path: str, sources: _Sources) -> dict[str, Any]:
    commit = _commit(repo, sha)
    writer = commit["role"]
    position = chain.landing(repo.git, sha)
    landed = None if position is None else _commit(repo, chain.sha(position))
    via = "direct" if landed is not None and landed["sha"] == sha else "merge" if landed else "unknown"
    origin: dict[str, Any] = {
        "commit": commit, "writer": writer, "lines": [], "via": via,
        "landed": None if landed is None else {k: landed[k] for k in ("sha", "committed_at", "summary")},
        "pull_request": None, "forge_error": None, "resolution": None, "dream": None, "dream_note": None,
        "transcript": None,
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
            origin["transcript"] = _transcript(origin["dream"], sources)
    if origin["pull_request"] is not None:
        origin["pull_request"].pop("body", None)
    return origin


def _pull_request(sources: _Sources, sha: str, landed: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
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
        return fallback, messages.HISTORY_FORGE_FAILED.format(problem=exc)
    data = evidence.pull_request_from_forge(chosen, reviews)
    data["body"] = chosen.body
    return data, None


def _dream(commit: dict[str, Any], pull: dict[str, Any] | None, path: str) -> tuple[dict[str, Any] | None, str | None]:
    """The dream's provenance: the pull request's block when the forge gave it (and it is this
    dream's), else the commit's trailers."""
    from bot.dream.provenance import ProvenanceError, parse_provenance

    from_trailers = evidence.dream_from_trailers(commit["message"])
    body = (pull or {}).get("body")
    if not body:
        return from_trailers, None
    try:
        provenance = parse_provenance(body)
    except ProvenanceError as exc:
        return from_trailers, messages.HISTORY_PROVENANCE_UNREADABLE.format(problem=exc)
    if provenance is None:
        return from_trailers, messages.HISTORY_PROVENANCE_ABSENT
    if from_trailers is not None and from_trailers["dream_id"] != provenance.dream_id:
        return from_trailers, messages.HISTORY_PROVENANCE_OTHER.format(dream=provenance.dream_id)
    return evidence.dream_from_provenance(provenance, path), None


def _transcript(dream: dict[str, Any], sources: _Sources) -> dict[str, Any]:
    agent, conversation = dream.get("agent_id"), dream.get("conversation_id")
    out: dict[str, Any] = {"agent_id": agent, "conversation_id": conversation, "available": False, "reason": None,
                           "messages": [], "missing": []}
    if not agent or not conversation:
        out["reason"] = messages.HISTORY_TRANSCRIPT_UNNAMED
        return out
    rows, reason = sources.read_transcript(agent, conversation)
    if rows is None:
        out["reason"] = reason
        return out
    ids, first, last = evidence.wanted_messages(dream)
    out["messages"], out["missing"] = evidence.select_messages(rows, ids, first, last)
    out["available"] = True
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
    env.filters.update(ranges=_ranges, when=_when)
    return env.get_template("history/why.txt.j2")


def render_why(report: dict[str, Any]) -> str:
    """The report of `why` as text for a person (templates/history/why.txt.j2)."""
    return _why_template().render(r=report).rstrip("\n") + "\n"
