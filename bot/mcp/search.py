"""`memory_search`: one query over the memory files at HEAD and the agent's transcripts.

Memory files are ranked by `bot.transcript.documents` (the transcripts' BM25, one file one
document). Transcripts are searched by the transcript
store (`search_in_context`: neighbouring turns and the dates a query names count too).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.transcript.documents import FileHit
from bot.transcript.store import Hit, TranscriptStore


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
            parts.append(f"Memory files ({len(files)}):")
            parts.extend(f"{rank}. {hit.path}:{hit.line or 1}: {hit.snippet}"
                         for rank, hit in enumerate(files, 1))
        else:
            parts.append(f"No memory file matches {query!r}.")
    if hits:
        parts.append(f"Conversation messages ({len(hits)}):")
        parts.extend(f"{rank}. {hit.captured_at} {hit.conversation_id} {hit.kind} {hit.message_id} "
                     f"(score {hit.score:.2f}): {hit.snippet}" for rank, hit in enumerate(hits, 1))
    elif hits is not None:
        parts.append(f"No conversation message matches {query!r}.")
    if note:
        parts.append(note)
    return "\n".join(parts)
