"""BM25 over a handful of documents held in memory (memory files at HEAD, archival entries),
ranked with the transcripts' tokenizer and scoring. A memory holds a few hundred files at most,
so a full scan is cheap and needs no index to keep in step with HEAD. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from bot.errors import MemrepoError
from bot.transcript import bm25, snippet, texts
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


def ranked(files: Mapping[str, str], query: str) -> list[tuple[str, float]]:
    """Every file that matches `query` with its BM25 score, best first, ties by path. Pure."""
    units = parse_query(query)
    if not units:
        raise MemrepoError(texts.SEARCH_NO_WORDS)
    docs = {path: tokenize(text) for path, text in files.items()}
    if not docs:
        return []
    avgdl = max(sum(len(tokens) for tokens in docs.values()) / len(docs), 1.0)
    tfs = {path: [bm25.count(tokens, unit.tokens) for unit in units] for path, tokens in docs.items()}
    idfs = [bm25.idf(len(docs), sum(1 for counts in tfs.values() if counts[i] > 0)) for i in range(len(units))]
    scored = [(path, bm25.score(idfs, counts, len(docs[path]), avgdl)) for path, counts in tfs.items() if any(counts)]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def search_files(files: Mapping[str, str], query: str, k: int) -> list[FileHit]:
    """The k best files for `query`, best first, ties by path, each with its first matching
    line and a snippet. Pure."""
    marked = {token for unit in parse_query(query) for token in unit.tokens}
    return [FileHit(path, score, first_line(files[path], marked), snippet.make(files[path], marked))
            for path, score in ranked(files, query)[:k]]


def first_line(text: str, tokens: set[str]) -> int | None:
    """The 1-based number of the first line holding one of `tokens`."""
    for number, line in enumerate(text.splitlines(), 1):
        if tokens.intersection(tokenize(line)):
            return number
    return None
