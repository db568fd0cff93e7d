"""MemGPT's two searches over what memrepo already keeps: `archival_memory_search` over external
memory (archival entries and every other external file at HEAD) and `conversation_search`
over this agent's transcripts. Both answer as MemGPT's functions did, so agents written for
it read them unchanged: `Showing 5 of 12 results (page 0/2): [...]`, the results as JSON,
each with its timestamp, pages of 5 counted from 0 (`limit` sets another page size).

Ranking is BM25 (`bot.transcript.documents` for memory, the transcript store's fused search
for conversations). The page-and-render part is pure; the two searches read the repository
and the store."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.dates import search_range
from bot.errors import MemrepoError
from bot.memfs import Call, MemoryRepo, archival, calls, layout, memory_layout
from bot.transcript import documents
from bot.transcript.model import KINDS

# archival_memory_search and conversation_search (memgpt.py): paged results, in MemGPT's shape:
# the line, then the results as JSON.
SEARCH_PAGE = "Showing {shown} of {total} results (page {page}/{last}): {results}"
SEARCH_PAGE_PAST = "page {page} is past the last page of results ({last}); pages count from 0"
CONVERSATION_NO_TRANSCRIPT = ("no conversation is recorded for this agent here: conversation_search reads the "
                              "transcripts of the agent's session (memrepo's transcript store)")
CONVERSATION_RESULT = "timestamp: {timestamp}, {role} - {text}"
CONVERSATION_BAD_ROLE = "unknown role '{role}'; use some of: {roles}"

ROLES = {"tool": ("tool_call", "tool_result"), **{kind: (kind,) for kind in KINDS}}
STAMP = archival.STAMP


@dataclass(frozen=True)
class Page:
    """One page of results: the MemGPT text, and the same results as data for a harness."""

    text: str
    results: list[Any]


def paged(results: Sequence[Any], page: int, size: int, show: Callable[[Any], Any] | None = None) -> Page:
    """Page `page` (from 0) of `results`, rendered as MemGPT renders it; `show` makes the
    shown ones into what the page holds (only those: the rest are counted, not read)."""
    total = len(results)
    pages = max((total + size - 1) // size, 1)
    if total == 0:
        return Page("No results found.", [])
    if page >= pages:
        raise MemrepoError(SEARCH_PAGE_PAST.format(page=page, last=pages - 1))
    shown = [item if show is None else show(item) for item in results[page * size:(page + 1) * size]]
    text = SEARCH_PAGE.format(shown=len(shown), total=total, page=page, last=pages - 1,
                                  results=json.dumps(shown, ensure_ascii=False))
    return Page(text, shown)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(STAMP)


def _within(moment: datetime, since: datetime | None, until: datetime | None) -> bool:
    return (since is None or moment >= since) and (until is None or moment < until)


# ------------------------------------------------------------------ archival memory
def external_files(repo: MemoryRepo, head: str) -> dict[str, str]:
    """The external memory at `head` as text: markdown outside core memory, skills, indexes
    and dot folders."""
    kind = memory_layout(repo, head)
    searchable = documents.searchable(repo.files(head))
    return {path: text for path, text in searchable.items()
            if path.endswith(".md") and not layout.is_core(path, kind) and not layout.is_index(path)
            and not path.startswith(layout.SKILLS)}


def archival_search(repo: MemoryRepo, call: Call) -> Page:
    """archival_memory_search: each archival entry is one result, each other external file one
    more, in the agent's own memory and in each attached shared memory's projection (paths
    `shared/<NAME>/<path>`, as the memory tool reads them); the timestamp is the entry's own
    moment, or the file's last change in its memory (a walk of the history, so taken only for
    the files a page shows, or that a date range must judge)."""
    from bot.memfs import shared_projection, shared_record

    a = call.args
    since, until = search_range(a.get("since"), a.get("until"))
    head = repo.head_sha()
    assert head is not None  # MemoryRepo.open refuses repositories without commits
    units: dict[str, str] = {}
    moments: dict[str, str] = {}
    paths: dict[str, str] = {}
    where: dict[str, tuple[MemoryRepo, str, str]] = {}  # key -> (its memory, that memory's HEAD, path there)
    memories: list[tuple[MemoryRepo, str, str]] = [(repo, head, "")]
    for attachment in shared_projection.attachments(repo, head):
        projection = shared_projection.open_projection(repo, attachment)
        projected = projection.head_sha() if projection is not None else None
        if projection is not None and projected is not None:
            memories.append((projection, projected, shared_record.addressed("", attachment.name) + "/"))
    for memory, at, prefix in memories:
        for inner, text in external_files(memory, at).items():
            path = prefix + inner
            found = archival.entries(inner, text) if archival.is_archival(inner) else []
            for entry in found:
                key = f"{path}#{entry.line}"
                units[key], moments[key], paths[key] = entry.content, entry.timestamp, path
            if not found:
                units[path], paths[path] = text, path
                where[path] = (memory, at, inner)

    def moment(key: str) -> str:
        if key not in moments:
            memory, at, inner = where[key]
            moments[key] = _last_change(memory, at, inner)
        return moments[key]

    keys = [key for key, _ in documents.ranked(units, a["query"])]
    if since is not None or until is not None:
        keys = [key for key in keys if _within(datetime.strptime(moment(key), STAMP).replace(tzinfo=UTC), since, until)]
    return paged(keys, a.get("page") or 0, a.get("limit") or calls.SEARCH_PAGE_SIZE,
                 show=lambda key: {"timestamp": moment(key), "content": units[key], "path": paths[key]})


def _last_change(repo: MemoryRepo, head: str, path: str) -> str:
    info = next(repo.log(head, path), None)
    assert info is not None  # a file at HEAD has a commit that wrote it
    return _stamp(datetime.fromtimestamp(info.time, UTC))


# ------------------------------------------------------------------ conversations
def conversation_search(store: Any, agent_id: str, call: Call) -> Page:
    """conversation_search: this agent's messages, best first (`roles` narrows the kinds)."""
    from bot.transcript.retrieval import search_in_context
    from bot.transcript.store import MAX_K

    a = call.args
    if agent_id not in store.agents():
        raise MemrepoError(CONVERSATION_NO_TRANSCRIPT)
    kinds = None
    if a.get("roles"):
        unknown = [role for role in a["roles"] if role not in ROLES]
        if unknown:
            raise MemrepoError(CONVERSATION_BAD_ROLE.format(role=unknown[0], roles=", ".join(ROLES)))
        kinds = [kind for role in a["roles"] for kind in ROLES[role]]
    hits = search_in_context(store, a["query"], agent=agent_id, kinds=kinds, since=a.get("since"),
                             until=a.get("until"), k=MAX_K)
    results = [CONVERSATION_RESULT.format(timestamp=_stamp(datetime.fromisoformat(hit.captured_at)),
                                              role=hit.kind, text=hit.text) for hit in hits]
    return paged(results, a.get("page") or 0, a.get("limit") or calls.SEARCH_PAGE_SIZE)
