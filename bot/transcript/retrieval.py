"""Search in context: a message ranks by its own BM25 score plus part of its best neighbour's.

Why: in a conversation the words of a question are often spread over turns next to each
other. "Did you go to the support group?" names the topic and the next turn, "Yes,
yesterday, it was powerful", holds the answer without repeating it. Scored alone, the
answering turn is far down the list; with a share of its neighbour's score it comes up next
to it. On LoCoMo (bench/locomo.py) this adds about seven points of turn recall@10.

    fused(m) = bm25(m) + weight * max(bm25(n) for n within `neighbours` turns of m)

Neighbours are by position in the same conversation log (within a conversation the index's
rowids follow the log, so a neighbour is the nearest rowid of that conversation). A message
outside the filters (kind, source, time range, conversation) neither appears nor lends its
score: the search covers what the filters leave, context included.

Dates: a query that names a day or a month ("on 13 October 2023", "in June") prefers the
messages captured then or up to a week later (people tell of events after they happen):
their score is multiplied by 1 + `date_weight`. English month names and ISO dates only; the
month names stay in the query as words.

Cost: no scan. The store's ranking (search.top_k, exact BM25, the same filters) gives a pool
of candidates per agent (`pool`, default 10 x k); the conversations of the rows around the
pool are read by rowid in one batch, the few neighbours outside the pool that hold a query
word are scored here with bm25.py and the index's statistics, and only the k results are
read in full and get snippets. A message outside the pool and not next to it scores at most
(1 + weight) x (1 + date_weight) x the pool's lowest score; when the k-th score is not above that, the
pool grows (x4, up to the store's limit of 1000), so the result is the exact top k of the
final score unless that limit is reached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.errors import MemrepoError
from bot.transcript import bm25, snippet, texts
from bot.transcript.index import Index
from bot.transcript.model import check_kind, time_range
from bot.transcript.search import Filters, match, top_k
from bot.transcript.store import MAX_K, Hit, TranscriptStore, check_source_filter
from bot.transcript.tokenize import Unit, parse_query

# Search in context (retrieval.py).
CONTEXT_BAD_NEIGHBOURS = "neighbours must be a whole number from 0 to {limit}, found {value!r}"
CONTEXT_BAD_WEIGHT = "weight must be a number from 0 to {limit:g}, found {value!r}"
CONTEXT_BAD_DATE_WEIGHT = "date_weight must be a number from 0 to {limit:g}, found {value!r}"

POOL_FACTOR = 10  # candidates ranked by the store per result asked for
GROWTH = 4  # the pool's growth when the bound does not settle the top k
WINDOW_SLACK = 6  # rows read beyond the neighbours on each side, for conversations that interleave
MAX_NEIGHBOURS = 50
MAX_WEIGHT = 10.0
_EPS = 1e-9


def search_in_context(store: TranscriptStore, query: str, agent: str | None = None,
                      conversation: str | None = None, kinds: Iterable[str] | None = None,
                      sources: Iterable[str] | None = None, since: datetime | str | None = None,
                      until: datetime | str | None = None, k: int = 10, *, neighbours: int = 1,
                      weight: float = 0.5, date_weight: float = 0.5, pool: int | None = None) -> list[Hit]:
    """The k best messages by fused score (module docstring), best first, ties by agent and
    message id. Arguments, checks and errors are TranscriptStore.search's, plus `neighbours`
    (turns on each side), `weight` (the share of the best neighbour's score), `date_weight`
    (the bonus for a message captured in a period the query names) and `pool` (the first
    pool size). Hits carry the final score; with both weights 0 they are store.search's."""
    units = parse_query(query)
    if not units:
        raise MemrepoError(texts.SEARCH_NO_WORDS)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise MemrepoError(texts.SEARCH_BAD_K.format(limit=MAX_K, value=k))
    if isinstance(neighbours, bool) or not isinstance(neighbours, int) or not 0 <= neighbours <= MAX_NEIGHBOURS:
        raise MemrepoError(CONTEXT_BAD_NEIGHBOURS.format(limit=MAX_NEIGHBOURS, value=neighbours))
    if not _is_weight(weight):
        raise MemrepoError(CONTEXT_BAD_WEIGHT.format(limit=MAX_WEIGHT, value=weight))
    if not _is_weight(date_weight):
        raise MemrepoError(CONTEXT_BAD_DATE_WEIGHT.format(limit=MAX_WEIGHT, value=date_weight))
    periods = query_periods(query) if date_weight > 0 else []
    since_us, until_us = time_range(since, until)
    filters = Filters(conversations=(conversation,) if conversation is not None else None,
                      kinds=tuple(check_kind(x) for x in kinds) if kinds is not None else None,
                      sources=tuple(check_source_filter(s) for s in sources) if sources is not None else None,
                      since_us=since_us, until_us=until_us)
    agents = store.search_agents(agent, conversation)
    size = min(MAX_K, max(k, pool if pool is not None else POOL_FACTOR * k))
    while True:
        hits: list[Hit] = []
        bounds: list[float] = []
        for agent_id in agents:
            with store.snapshot(agent_id) as index:
                context = _Context(index, agent_id, units, filters, neighbours)
                found, bound = context.best(size, k, weight, periods, date_weight)
            hits.extend(found)
            bounds.append(bound)
        hits.sort(key=lambda h: (-h.score, h.agent_id, h.message_id))
        hits = [hit for hit in hits[:k] if hit.score > 0]  # nothing matched and no neighbour did: noise
        bound = max(bounds, default=0.0)
        settled = bound == 0.0 or (len(hits) == k and hits[-1].score > bound + _EPS * max(1.0, bound))
        if settled or size >= MAX_K:
            return hits
        size = min(MAX_K, size * GROWTH)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH = "(" + "|".join(_MONTHS) + ")"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_FORMS = (  # (pattern, group of the year, of the month, of the day)
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), 1, 2, 3),
    (re.compile(rf"\b{_ORDINAL}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE), 3, 2, 1),
    (re.compile(rf"\b{_MONTH}\s+{_ORDINAL},?\s+(\d{{4}})\b", re.IGNORECASE), 3, 1, 2),
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(rf"\b{_MONTH}\b", re.IGNORECASE)
DATE_SLACK = timedelta(days=7)  # people tell of what happened up to a week later
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Period:
    """A time a query names: [start, end) in UTC, or a month of any year (start None)."""

    start: datetime | None
    end: datetime | None
    month: int = 0

    def contains(self, moment: datetime, slack: timedelta = DATE_SLACK) -> bool:
        """Whether a message captured at `moment` is about this period: in it, or up to
        `slack` after it (a conversation tells of events after they happen)."""
        if self.start is not None and self.end is not None:
            return self.start <= moment < self.end + slack
        earlier = moment - slack
        return moment.month == self.month or earlier.month == self.month


def _month_number(name: str) -> int:
    return _MONTHS.index(name.lower()) + 1


def _next_month(moment: datetime) -> datetime:
    return (moment.replace(day=28) + timedelta(days=4)).replace(day=1)


def query_periods(query: str) -> list[Period]:
    """The periods an English query names: a day ("13 October 2023", "October 13, 2023",
    "2023-10-13"), a month of a year ("October 2023"), or a month alone ("in June": that month
    of any year; "may" alone is the verb, never the month). Each part of the text counts once."""
    periods: list[Period] = []
    text = query
    for pattern, year, month, day in _DAY_FORMS:
        for found in pattern.finditer(text):
            month_value = found.group(month)
            try:
                start = datetime(int(found.group(year)),
                                 int(month_value) if month_value.isdigit() else _month_number(month_value),
                                 int(found.group(day)), tzinfo=UTC)
            except ValueError:
                continue
            periods.append(Period(start, start + timedelta(days=1)))
        text = pattern.sub(" ", text)
    for found in _MONTH_YEAR.finditer(text):
        start = datetime(int(found.group(2)), _month_number(found.group(1)), 1, tzinfo=UTC)
        periods.append(Period(start, _next_month(start)))
    text = _MONTH_YEAR.sub(" ", text)
    for found in _MONTH_ALONE.finditer(text):
        if found.group(1).lower() != "may":
            periods.append(Period(None, None, _month_number(found.group(1))))
    return list(dict.fromkeys(periods))


def _is_weight(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= MAX_WEIGHT


@dataclass
class _Context:
    """One agent's index during one query (inside its snapshot)."""

    index: Index
    agent_id: str
    units: Sequence[Unit]
    filters: Filters
    neighbours: int
    conversation: dict[int, str] = field(default_factory=dict)  # rowid -> conversation, rows read
    top: int = 0  # the highest rowid

    def best(self, size: int, k: int, weight: float, periods: Sequence[Period],
             date_weight: float) -> tuple[list[Hit], float]:
        """This agent's k best by final score, and the most a message left out of the
        candidates can score (0 when the pool holds every match)."""
        pool = top_k(self.index, self.units, size, self.filters)
        if not pool:
            return [], 0.0
        boost = 1.0 + date_weight if periods else 1.0
        full = len(pool) == size
        bound = (1.0 + weight) * boost * pool[-1].score if full else 0.0
        ids = {s.rowid: s.message_id for s in pool}
        score = {s.rowid: s.score for s in pool}
        final = self._fuse(score, ids, full, weight) if self.neighbours and weight else dict(score)
        if periods:
            self._prefer(final, periods, boost)
        ranked = sorted(final.items(), key=lambda item: (-item[1], ids[item[0]]))[:k]
        return self._hits([(value, ids[rowid], rowid) for rowid, value in ranked if value > 0.0]), bound

    def _fuse(self, score: dict[int, float], ids: dict[int, str], full: bool, weight: float) -> dict[int, float]:
        """Fused scores of the pool and of its neighbours that pass the filters (`ids` gets
        the message ids of the neighbours added)."""
        pool = list(score)
        _, _, _, self.top = self.index.state()
        self._read_windows(pool, 2 * self.neighbours + WINDOW_SLACK)
        near = {rowid: self._near(rowid) for rowid in pool}
        added = sorted({n for ns in near.values() for n in ns} - score.keys())
        for rowid in added:
            near[rowid] = self._near(rowid)
        others = sorted({n for ns in near.values() for n in ns} - score.keys())
        passing = self._passing(others)
        score = dict(score)
        if full:  # outside a full pool a message may still hold query words
            score.update(self._scores([r for r in others if r in passing]))
        candidates = pool + [r for r in added if r in passing]
        ids.update(self.index.message_ids([r for r in added if r in passing]))
        return {r: score.get(r, 0.0) + weight * max((score.get(n, 0.0) for n in near[r]), default=0.0)
                for r in candidates}

    def _prefer(self, final: dict[int, float], periods: Sequence[Period], boost: float) -> None:
        """Multiply the score of the messages captured in a period the query names."""
        rowids = list(final)
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, at_us in self.index.conn.execute(
                    f"SELECT rowid, at_us FROM messages WHERE rowid IN ({marks})", chunk):
                moment = _EPOCH + timedelta(microseconds=at_us)
                if any(p.contains(moment) for p in periods):
                    final[rowid] *= boost

    def _hits(self, chosen: Sequence[tuple[float, str, int]]) -> list[Hit]:
        """The chosen messages read in full, with their scores and snippets."""
        found = self.index.messages([rowid for _, _, rowid in chosen], self.agent_id)
        marked = [t for u in self.units for t in u.tokens]
        return [Hit(**found[rowid].__dict__, score=value, snippet=snippet.make(found[rowid].text, marked))
                for value, _, rowid in chosen]

    def _read_windows(self, rowids: Iterable[int], span: int) -> None:
        """The conversation of every row within `span` rowids of the given ones (one batch
        of primary-key lookups; the rows of a conversation are usually close together)."""
        wanted = sorted({r for rowid in rowids for r in range(max(1, rowid - span), min(self.top, rowid + span) + 1)}
                        - self.conversation.keys())
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            self.conversation.update(self.index.conn.execute(
                f"SELECT rowid, conversation_id FROM messages WHERE rowid IN ({marks})", chunk))

    def _near(self, rowid: int) -> list[int]:
        """The rows of the same conversation within `neighbours` positions before and after."""
        return self._side(rowid, -1) + self._side(rowid, 1)

    def _side(self, rowid: int, step: int) -> list[int]:
        conversation = self.conversation[rowid]
        found: list[int] = []
        at = rowid + step
        while len(found) < self.neighbours and 1 <= at <= self.top:
            other = self.conversation.get(at)
            if other is None:  # beyond the rows read (or a rowid left unused): ask the index
                return self._side_by_query(rowid, step, conversation)
            if other == conversation:
                found.append(at)
            at += step
        return found

    def _side_by_query(self, rowid: int, step: int, conversation: str) -> list[int]:
        if step < 0:
            sql = ("SELECT rowid, conversation_id FROM messages WHERE conversation_id = ? AND rowid < ? "
                   "ORDER BY rowid DESC LIMIT ?")
        else:
            sql = ("SELECT rowid, conversation_id FROM messages WHERE conversation_id = ? AND rowid > ? "
                   "ORDER BY rowid LIMIT ?")
        rows = self.index.conn.execute(sql, (conversation, rowid, self.neighbours)).fetchall()
        self.conversation.update(rows)
        return [r for r, _ in rows]

    def _passing(self, rowids: Sequence[int]) -> set[int]:
        """The rows that pass the search's filters."""
        where, params = self.filters.sql()
        if not where:
            return set(rowids)
        found: set[int] = set()
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(r for (r,) in self.index.conn.execute(
                f"SELECT rowid FROM messages m WHERE rowid IN ({marks}) AND {where}", (*chunk, *params)))
        return found

    def _scores(self, rowids: Sequence[int]) -> dict[int, float]:
        """BM25 of the given rows as search.top_k computes it (bm25.py, this index's N,
        average length and document frequencies); rows without a query word are left out."""
        if not rowids:
            return {}
        firsts = {u.tokens[0] for u in self.units}
        streams = [(r, tokens, length, firsts.intersection(tokens))
                   for r, (tokens, length) in self.index.tokens(rowids).items()]
        streams = [s for s in streams if s[3]]
        if not streams:
            return {}
        n, total = self.index.stats()
        avgdl = total / n
        singles = self.index.dfs([u.tokens[0] for u in self.units if not u.is_phrase])
        single_idf = {t: bm25.idf(n, df) for t, (df, _) in singles.items()}
        phrases = [(u, bm25.idf(n, self.index.count(match(u)))) for u in self.units if u.is_phrase]
        out: dict[int, float] = {}
        for rowid, tokens, length, present in streams:
            value = 0.0
            for token in present:
                if token in single_idf:
                    value += bm25.term_score(single_idf[token], tokens.count(token), length, avgdl)
            for unit, idf in phrases:
                if unit.tokens[0] in present:
                    value += bm25.term_score(idf, bm25.count(tokens, unit.tokens), length, avgdl)
            out[rowid] = value
        return out
