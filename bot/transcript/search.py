"""Exact BM25 top-k over one agent's index, scoring as few messages as possible.

The query is an OR of units (tokens, or quoted phrases). Scores are computed here, in
Python, with the formula of bm25.py (FTS5's k1 = 1.2, b = 0.75, Lucene's idf); FTS5 serves only as
posting lists: which messages contain a token, intersections and differences of those sets
in C. N, avgdl and document frequencies come from the index's own tables, message lengths
from an in-memory array, and term frequencies are 1 except for the few messages the `rep`
column lists, whose token streams are counted.

MaxScore, exact: every unit has an upper bound (the best share it gives any message,
bm25.tight_bound). Units are taken from the highest bound down; taking a unit scores, in
full, every message that contains it and none of the units taken before (the other units'
shares come from intersections computed by FTS5). A message not scored yet contains none of
the units taken, so it scores at most the sum of the remaining units' bounds: once the k-th
best score found is above that sum, no message left can enter the k best, and the common
words of a query ("the", "what about") are never read whole. Ties are broken by message id.

With a conversation or time filter that leaves few messages, those are scored directly.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from bot.transcript import bm25
from bot.transcript.index import Index
from bot.transcript.tokenize import Unit

SCAN_LIMIT = 3000  # a filter leaving at most this many messages is scored message by message
_EPS = 1e-9


@dataclass(frozen=True)
class Filters:
    """What a search is limited to; None means no limit."""

    conversations: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None  # "tool" and "external" stand for the whole family
    since_us: int | None = None  # inclusive
    until_us: int | None = None  # exclusive

    @property
    def narrow(self) -> bool:
        """Filters an index can use to find few messages fast."""
        return bool(self.conversations) or self.since_us is not None or self.until_us is not None

    def sql(self) -> tuple[str, list[object]]:
        """A WHERE clause over messages (alias m) and its parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if self.conversations is not None:
            clauses.append(f"m.conversation_id IN ({','.join('?' * len(self.conversations))})")
            params.extend(self.conversations)
        if self.kinds is not None:
            clauses.append(f"m.kind IN ({','.join('?' * len(self.kinds))})")
            params.extend(self.kinds)
        if self.sources is not None:
            exact = [s for s in self.sources if s not in ("tool", "external")]
            options = []
            if exact:
                options.append(f"m.source IN ({','.join('?' * len(exact))})")
                params.extend(exact)
            for family in (s for s in self.sources if s in ("tool", "external")):
                options.append("substr(m.source, 1, ?) = ?")
                params.extend((len(family) + 1, family + ":"))
            clauses.append("(" + " OR ".join(options) + ")")
        if self.since_us is not None:
            clauses.append("m.at_us >= ?")
            params.append(self.since_us)
        if self.until_us is not None:
            clauses.append("m.at_us < ?")
            params.append(self.until_us)
        return " AND ".join(clauses), params


@dataclass(frozen=True)
class Scored:
    rowid: int
    score: float
    message_id: str

    @property
    def key(self) -> tuple[float, str]:
        return (-self.score, self.message_id)


def match(unit: Unit) -> str:
    """The FTS5 expression for a unit: a token anywhere, a phrase in the token stream."""
    return f"tokens : {unit.fts()}" if unit.is_phrase else unit.fts()


def _any(units: Sequence[Unit]) -> str:
    return " OR ".join(f"({match(u)})" for u in units)


class _Query:
    """One query against one index snapshot: statistics, bounds and scoring."""

    def __init__(self, index: Index, units: Sequence[Unit], n: int, total: int,
                 df: dict[Unit, int], skylines: dict[Unit, dict[int, int]]) -> None:
        self.index = index
        self.units = units
        self.avgdl = total / n
        self.idf = {u: bm25.idf(n, df[u]) for u in units}
        self.skyline = skylines
        self.bound = {u: bm25.tight_bound(self.idf[u], skylines.get(u, {}), self.avgdl) for u in units}
        self.c1 = bm25.K1 * (1.0 - bm25.B)
        self.c2 = bm25.K1 * bm25.B / self.avgdl

    def add(self, scores: dict[int, float], unit: Unit, members: Sequence[int], repeated: Sequence[int],
            lengths: Sequence[int]) -> None:
        """Add `unit`'s share to the scores of `members` (tf 1, except the `repeated` ones,
        whose token streams are counted; for a phrase every member is counted)."""
        idf = self.idf[unit]
        c1, c2 = self.c1, self.c2
        top = idf * (bm25.K1 + 1.0)
        if unit.is_phrase:
            counted = set(members)
        else:
            counted = set(repeated).intersection(scores)
            for rowid in members:
                if rowid in scores and rowid not in counted:
                    scores[rowid] += top / (1.0 + c1 + c2 * lengths[rowid])
        if counted:
            streams = self.index.tokens(sorted(counted.intersection(scores)))
            for rowid, (tokens, length) in streams.items():
                scores[rowid] += bm25.term_score(idf, bm25.count(tokens, unit.tokens), length, self.avgdl)


def scan(query: _Query, rows: Sequence[tuple[int, str, int, str]], k: int) -> list[Scored]:
    """Score given rows (rowid, tokens, length, message id) one by one: for narrow filters."""
    found = []
    for rowid, text, length, mid in rows:
        tokens = text.split()
        total = 0.0
        matched = False
        for unit in query.units:
            tf = bm25.count(tokens, unit.tokens)
            if tf:
                matched = True
                total += bm25.term_score(query.idf[unit], tf, length, query.avgdl)
        if matched:
            found.append(Scored(rowid, total, mid))
    return sorted(found, key=lambda s: s.key)[:k]


def top_k(index: Index, units: Sequence[Unit], k: int, filters: Filters = Filters()) -> list[Scored]:
    """The k best messages of this index for `units`, best first, exact BM25 (call inside
    index.snapshot(), so that every number comes from the same moment)."""
    n, total, generation, top = index.state()
    if n == 0 or not units:
        return []
    known = index.dfs([u.tokens[0] for u in units if not u.is_phrase])
    df = {u: known[u.tokens[0]][0] if not u.is_phrase else index.count(match(u)) for u in units}
    skylines = {u: known[u.tokens[0]][1] for u in units if not u.is_phrase}
    live = [u for u in units if df[u] > 0]
    if not live:
        return []
    query = _Query(index, live, n, total, df, skylines)
    where, params = filters.sql()
    if filters.narrow and index.count_filtered(where, params, SCAN_LIMIT + 1) <= SCAN_LIMIT:
        return scan(query, index.filtered(where, params, SCAN_LIMIT), k)

    lengths = index.lengths(generation, top)
    found = _maxscore(query, live, k, where, params, lengths, defer=True)
    if found is None:  # the common words themselves had to be read: no deferring
        found = _maxscore(query, live, k, where, params, lengths, defer=False)
    scores, cut = found
    near = [rowid for rowid, value in scores.items() if value >= cut]
    ids = index.message_ids(near)
    return sorted((Scored(r, scores[r], ids[r]) for r in near), key=lambda s: s.key)[:k]


def _maxscore(query: _Query, live: Sequence[Unit], k: int, where: str, params: Sequence[object],
              lengths: Sequence[int], defer: bool) -> tuple[dict[int, float], float] | None:
    """Scores of the messages that may be among the k best, and the score they must reach.

    With `defer`, units in half the messages or more (idf at most ln 2, a share of at most
    1.53) are left out of the rounds and added at the end to the messages that could
    change places for them; None if those units would have to be read whole after all."""
    index = query.index
    deferred = [u for u in live if defer and query.idf[u] <= bm25.COMMON_IDF]
    order = sorted((u for u in live if u not in deferred), key=lambda u: (-query.bound[u], u.tokens))
    if not order:
        return None
    slack = sum(query.bound[u] for u in deferred)
    remaining = [sum(query.bound[u] for u in order[j:]) + slack for j in range(len(order))]
    scores: dict[int, float] = {}
    best: list[float] = []  # the k highest scores so far (a min-heap)
    for j, unit in enumerate(order):
        if len(best) == k and best[0] > remaining[j] + _EPS * max(1.0, remaining[j]):
            break  # a message not scored yet has none of the units taken: it cannot make the k best
        fresh = f"({match(unit)}) NOT ({_any(order[:j])})" if j else match(unit)
        members = index.rowids(fresh, where, params)
        if not members:
            continue
        step = dict.fromkeys(members, 0.0)
        for other in order[j:]:
            inside = members if other is unit else index.rowids(f"({fresh}) AND ({match(other)})")
            query.add(step, other, inside, _repeated(query, fresh, other), lengths)
        scores.update(step)
        values = sorted(step.values(), reverse=True)[:k]
        for value in values:
            if len(best) < k:
                heapq.heappush(best, value)
            elif value > best[0]:
                heapq.heapreplace(best, value)
            else:
                break
    else:
        if deferred and (len(best) < k or best[0] <= slack + _EPS):
            return None  # messages holding only the common words may belong in the k best
    if not best:
        return scores, float("-inf")
    cut = best[0] - slack if len(best) == k else float("-inf")
    if deferred:
        near = [rowid for rowid, value in scores.items() if value >= cut]
        streams = index.tokens(near)
        for rowid in near:
            tokens, length = streams[rowid]
            for unit in deferred:
                scores[rowid] += bm25.term_score(query.idf[unit], bm25.count(tokens, unit.tokens), length,
                                                 query.avgdl)
    return scores, cut


def _repeated(query: _Query, fresh: str, unit: Unit) -> list[int]:
    """Messages among `fresh` holding `unit` twice or more (none to look up when the
    skyline says no message has it twice)."""
    if unit.is_phrase or max(query.skyline.get(unit) or {1: 0}) < 2:
        return []
    return query.index.rowids(f"({fresh}) AND (rep : {unit.fts()})")
