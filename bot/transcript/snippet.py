"""Snippets: the part of a message around its matches, with the matches marked.

FTS5's snippet() would show the normalised token stream (stems, bigrams), not what the
person wrote, so snippets are cut from the original text here: every word that produced a
query token is marked (in CJK runs only the matching characters), and the window of text
holding the most marks is shown, on one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from bot.transcript.tokenize import normalize, spans, word_token

OPEN = "**"
CLOSE = "**"
ELLIPSIS = "…"
WIDTH = 160  # characters of text shown around the matches
SCAN_CHARS = 100_000  # matches are looked for in the first this many characters of a message
_SPACE = re.compile(r"\s+")


def marks(text: str, wanted: set[str]) -> list[tuple[int, int]]:
    """(start, end) of every part of `text` that produced one of the `wanted` tokens."""
    if text.isascii():
        finder = _candidates(frozenset(wanted))
        if finder is None:
            return []
        return [(m.start(), m.end()) for m in finder.finditer(text.lower()) if word_token(m.group(0)) in wanted]
    found: list[tuple[int, int]] = []
    for span in spans(text):
        if not wanted.intersection(span.tokens):
            continue
        if not span.cjk:
            found.append((span.start, span.end))
            continue
        piece = text[span.start : span.end]
        hit = [False] * len(piece)
        for i in range(len(piece)):
            for size in (1, 2):
                if i + size <= len(piece) and normalize(piece[i : i + size]) in wanted:
                    hit[i : i + size] = [True] * size
        i = 0
        while i < len(piece):
            if not hit[i]:
                i += 1
                continue
            j = i
            while j < len(piece) and hit[j]:
                j += 1
            found.append((span.start + i, span.start + j))
            i = j
    return found


@lru_cache(maxsize=256)
def _candidates(wanted: frozenset[str]) -> re.Pattern[str] | None:
    """ASCII words that may stem to a wanted token: a stem keeps all but at most its last
    two letters of the word (Porter2's irregular forms too), so only words starting that way
    are stemmed again to check."""
    prefixes = sorted({t[: max(1, len(t) - 2)] for t in wanted if t.isascii()})
    if not prefixes:
        return None
    return re.compile(r"(?<![a-z0-9'])(?:" + "|".join(map(re.escape, prefixes)) + r")[a-z0-9]*(?:'[a-z0-9]+)*")


def window(text: str, found: list[tuple[int, int]], width: int) -> tuple[int, int]:
    """The stretch of about `width` characters holding the most marks, cut at spaces."""
    size = len(text)
    if not found:
        end = min(size, width)
        space = text.rfind(" ", width // 2, end) if end < size else -1
        return 0, space if space > 0 else end
    best_i, best_j, j = 0, 1, 0
    for i, (lo, _) in enumerate(found):
        j = max(j, i + 1)
        while j < len(found) and found[j][1] - lo <= width:
            j += 1
        if j - i > best_j - best_i:
            best_i, best_j = i, j
    lo, hi = found[best_i][0], found[best_j - 1][1]
    if hi - lo >= width:
        return lo, hi
    start = max(0, lo - (width - (hi - lo)) // 3)
    end = min(size, start + width)
    start = max(0, min(start, end - width))
    if start > 0:
        space = text.find(" ", start, lo)
        if space != -1:
            start = space + 1
    if end < size:
        space = text.rfind(" ", hi, end)
        if space != -1:
            end = space
    return start, end


def make(text: str, tokens: Iterable[str], width: int = WIDTH) -> str:
    """A one-line snippet of `text` with the words behind `tokens` marked **like this**."""
    wanted = set(tokens)
    found = marks(text[:SCAN_CHARS], wanted) if wanted else []
    start, end = window(text, found, width)
    pieces = []
    cursor = start
    for lo, hi in found:
        if hi <= start or lo >= end:
            continue
        lo, hi = max(lo, start), min(hi, end)
        pieces.append(text[cursor:lo])
        pieces.append(OPEN + text[lo:hi] + CLOSE)
        cursor = hi
    pieces.append(text[cursor:end])
    body = _SPACE.sub(" ", "".join(pieces)).strip()
    return (ELLIPSIS if start > 0 else "") + body + (ELLIPSIS if end < len(text) else "")
