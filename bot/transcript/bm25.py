"""BM25 with SQLite FTS5's constants and length normalisation and Lucene's idf, in pure Python.

FTS5 (ext/fts5/fts5_aux.c, documented in https://sqlite.org/fts5.html section 5.1.1) uses
k1 = 1.2 and b = 0.75, fixed; avgdl = all tokens / all rows; a phrase counts as one term
(n = rows containing the phrase, tf = its occurrences). term_score is FTS5's share of one term
exactly (a test checks it against bm25() with fts5_idf).

The idf is Lucene's (and most BM25 packages'), ln(1 + (N - n + 0.5) / (n + 0.5)): positive for
every term, largest for the rarest, and still above 0 for a term in every row. FTS5's own,
ln((N - n + 0.5) / (n + 0.5)), is 0 or negative for a term in half the rows or more and FTS5
raises it to 1e-6 there: the only hit of a search among few messages scored 0.0000, and every
common word weighed the same. Scores are the positive sum.

The search computes scores with these functions and uses FTS5 only as posting lists; the
benchmark's full scan uses them over every message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.2
B = 0.75
COMMON_IDF = math.log(2.0)  # the idf of a term in half the rows; a term in more has less
FTS5_IDF_FLOOR = 1e-6


def idf(n_rows: int, n_hits: int) -> float:
    """Lucene's idf: how much a term in `n_hits` of `n_rows` rows tells rows apart, always
    positive (0 only for an empty index), so every hit's score says something."""
    if n_rows <= 0:
        return 0.0
    return math.log(1.0 + (n_rows - n_hits + 0.5) / (n_hits + 0.5))


def fts5_idf(n_rows: int, n_hits: int) -> float:
    """FTS5's idf, floored at 1e-6 for a term in half the rows or more: kept to check
    term_score against FTS5's bm25() and for the benchmark's FTS5 variant."""
    value = math.log((n_rows - n_hits + 0.5) / (n_hits + 0.5)) if n_rows > 0 else 0.0
    return value if value > 0.0 else FTS5_IDF_FLOOR


def term_score(idf_value: float, tf: float, length: float, avgdl: float) -> float:
    """One term's share of a message's score."""
    if tf <= 0:
        return 0.0
    return idf_value * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * length / avgdl))


def upper_bound(idf_value: float) -> float:
    """No message gets more than this from one term: tf*(k1+1)/(tf+x) < k1+1 for any x > 0."""
    return idf_value * (K1 + 1.0)


def skyline(points: dict[int, int]) -> dict[int, int]:
    """Keep the (tf, length) pairs no other pair beats on both counts (more occurrences in a
    message no longer): the best share a term can give is always at one of them."""
    kept: dict[int, int] = {}
    shortest = None
    for tf in sorted(points, reverse=True):
        length = points[tf]
        if shortest is None or length < shortest:
            kept[tf] = length
            shortest = length
    return kept


def merge_skylines(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    merged = dict(a)
    for tf, length in b.items():
        if length < merged.get(tf, length + 1):
            merged[tf] = length
    return skyline(merged)


def encode_skyline(points: dict[int, int]) -> str:
    return " ".join(f"{tf}:{length}" for tf, length in sorted(points.items()))


def decode_skyline(text: str) -> dict[int, int]:
    return {int(tf): int(length) for tf, _, length in (p.partition(":") for p in text.split())}


def tight_bound(idf_value: float, points: dict[int, int], avgdl: float) -> float:
    """The most a term can add to any message's score, from its skyline: exact for the
    current avgdl, and never above upper_bound()."""
    if not points:
        return upper_bound(idf_value)
    return max(term_score(idf_value, tf, length, avgdl) for tf, length in points.items())


def score(idfs: Sequence[float], tfs: Sequence[float], length: float, avgdl: float) -> float:
    total = 0.0
    for idf_value, tf in zip(idfs, tfs, strict=True):
        total += term_score(idf_value, tf, length, avgdl)
    return total


def count(tokens: Sequence[str], unit: Sequence[str]) -> int:
    """Occurrences of a token (one-element unit) or a phrase (consecutive tokens) in a
    message's token stream; overlapping phrase occurrences count, as in FTS5."""
    if len(unit) == 1:
        return tokens.count(unit[0]) if isinstance(tokens, list) else list(tokens).count(unit[0])
    first, size = unit[0], len(unit)
    hits = 0
    for i, token in enumerate(tokens):
        if token == first and tuple(tokens[i : i + size]) == tuple(unit):
            hits += 1
    return hits
