"""`memory_search`: one query over the memory files at HEAD and the agent's transcripts.

Memory files are ranked with the same tokenizer and BM25 as transcripts (bot/transcript), one
file one document, over the few hundred files a memory holds at most, so a full scan is cheap
and needs no index to keep in step with HEAD. Transcripts are searched by the transcript
store (`search_in_context`: neighbouring turns and the dates a query names count too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bot import messages
from bot.errors import MemrepoError
from bot.transcript import bm25, snippet
from bot.transcript.store import Hit, TranscriptStore
from bot.transcript.tokenize import parse_query, tokenize


@dataclass(frozen=True)
class FileHit:
    """A memory file that matches: its BM25 score, the first line with a match, a snippet."""

    path: str
    score: float
    line: int | None
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def searchable(files: Mapping[str, bytes]) -> dict[str, str]:
    """The files an agent reads as memory (machine state under dot folders left out), as text."""
    return {path: data.decode("utf-8", "replace") for path, data in files.items()
            if not any(part.startswith(".") for part in path.split("/"))}


def search_files(files: Mapping[str, str], query: str, k: int) -> list[FileHit]:
    """The k best files for `query`, best first, ties by path. Pure."""
    units = parse_query(query)
    if not units:
        raise MemrepoError(messages.SEARCH_NO_WORDS)
    docs = {path: tokenize(text) for path, text in files.items()}
    if not docs:
        return []
    avgdl = max(sum(len(tokens) for tokens in docs.values()) / len(docs), 1.0)
    tfs = {path: [bm25.count(tokens, unit.tokens) for unit in units] for path, tokens in docs.items()}
    idfs = [bm25.idf(len(docs), sum(1 for counts in tfs.values() if counts[i] > 0)) for i in range(len(units))]
    scored = [(bm25.score(idfs, counts, len(docs[path]), avgdl), path) for path, counts in tfs.items() if any(counts)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    marked = {token for unit in units for token in unit.tokens}
    return [FileHit(path, score, first_line(files[path], marked), snippet.make(files[path], marked))
            for score, path in scored[:k]]


def first_line(text: str, tokens: set[str]) -> int | None:
    """The 1-based number of the first line holding one of `tokens`."""
    for number, line in enumerate(text.splitlines(), 1):
        if tokens.intersection(tokenize(line)):
            return number
    return None


def search_transcripts(store: TranscriptStore, agent_id: str, query: str, k: int, *, conversation: str | None = None,
                       since: str | None = None, until: str | None = None) -> list[Hit] | None:
    """The agent's k best messages, or None when no transcript of the agent was recorded."""
    from bot.transcript.retrieval import search_in_context

    if agent_id not in store.agents():
        return None
    return search_in_context(store, query, agent=agent_id, conversation=conversation, since=since, until=until, k=k)


def render(query: str, files: Sequence[FileHit] | None, hits: Sequence[Hit] | None, note: str | None = None) -> str:
    """The text a model reads: memory files first (what it already knows), then messages; None
    means that side was not searched, `note` says why one could not be."""
    parts: list[str] = []
    if files is not None:
        if files:
            parts.append(messages.MCP_SEARCH_FILES_HEADER.format(count=len(files)))
            parts.extend(messages.MCP_SEARCH_FILE.format(rank=rank, path=hit.path, line=hit.line or 1,
                                                         score=hit.score, snippet=hit.snippet)
                         for rank, hit in enumerate(files, 1))
        else:
            parts.append(messages.MCP_SEARCH_NO_FILES.format(query=query))
    if hits:
        parts.append(messages.MCP_SEARCH_MESSAGES_HEADER.format(count=len(hits)))
        parts.extend(messages.MCP_SEARCH_MESSAGE.format(
            rank=rank, time=hit.captured_at, conversation=hit.conversation_id, kind=hit.kind,
            message_id=hit.message_id, score=hit.score, snippet=hit.snippet) for rank, hit in enumerate(hits, 1))
    elif hits is not None:
        parts.append(messages.MCP_SEARCH_NO_MESSAGES.format(query=query))
    if note:
        parts.append(note)
    return "\n".join(parts)
