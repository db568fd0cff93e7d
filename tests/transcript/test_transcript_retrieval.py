"""Search in context (bot/transcript/retrieval.py) and the query's function-word rule, on small
synthetic transcripts: neighbour fusion, ties, filters, k, the date preference, and the
whole result checked against scoring every message in Python."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.errors import MemrepoError
from bot.transcript import Message, TranscriptStore, bm25, retrieval
from bot.transcript import tokenize as tokenizer
from bot.transcript.model import parse_time
from bot.transcript.retrieval import Period, query_periods, search_in_context
from bot.transcript.tokenize import Unit, parse_query, tokenize
from tests.conftest import StoreClock


def hourly() -> StoreClock:
    """The store's clock: one hour per message, from 2024-05-01; tests move `now`."""
    return StoreClock("2024-05-01T00:00:00Z", timedelta(hours=1))


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    with TranscriptStore(tmp_path / "home", fsync=False, clock=hourly()) as s:
        yield s


def say(store: TranscriptStore, conversation: str, *texts: str, agent: str = "ada",
        kind: str = "user") -> list[Message]:
    return [store.append(agent, conversation, kind, text) for text in texts]


FILLER = "we talked about the weather and some other things for a long while that afternoon"


# ------------------------------------------------------------------ the stopword rule

@pytest.mark.parametrize(("query", "units"), [
    ("what did the lighthouse keeper say", [("lighthous",), ("keeper",), ("say",)]),
    ("When did Caroline go to the support group?", [("carolin",), ("go",), ("support",), ("group",)]),
    ("how is it", [("how",), ("is",), ("it",)]),  # nothing else: the function words stay
    ("the the THE", [("the",)]),
    ('"the lighthouse" of', [("the", "lighthous")]),  # a phrase keeps every word
    ('what "of" is', [("of",)]),
    ("메모리를 the", [("메모리를",), ("메모리",), ("메모",), ("모리",), ("리를",)]),
])
def test_query_leaves_out_function_words(query: str, units: list[tuple[str, ...]]) -> None:
    assert parse_query(query) == [Unit(u) for u in units]


def test_stopwords_are_query_side_only() -> None:
    assert tokenize("what is the lighthouse") == ["what", "is", "the", "lighthous"]
    assert "may" not in tokenizer.ENGLISH_STOPWORDS and "like" not in tokenizer.ENGLISH_STOPWORDS


def test_stopword_rule_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer, "QUERY_STOPWORDS", frozenset())
    assert parse_query("what lighthouse") == [Unit(("what",)), Unit(("lighthous",))]


def test_function_words_no_longer_pull_up_messages(store: TranscriptStore) -> None:
    chatter = say(store, "c1", "what is it that you did there, and what was it for?", "what is that")
    target = say(store, "c1", f"{FILLER} and the lighthouse")[0]
    say(store, "c1", *[FILLER] * 6)
    assert [h.message_id for h in store.search("what is the lighthouse", k=1)] == [target.message_id]
    only = store.search("what is it", k=5)  # only function words: still a search
    assert {h.message_id for h in only} >= {m.message_id for m in chatter}


# ------------------------------------------------------------------------- fusion

def test_a_neighbour_of_a_strong_match_outranks_an_isolated_weak_match(store: TranscriptStore) -> None:
    question, answer = say(store, "c1", "did you go to the lighthouse festival on the coast?",
                           "yes! it was wonderful, we stayed until the fireworks")
    say(store, "c1", *[FILLER] * 5)
    weak = say(store, "c2", f"{FILLER}, {FILLER}, and someone mentioned a festival")[0]
    say(store, "c2", *[FILLER] * 5)
    plain = [h.message_id for h in store.search("lighthouse festival", k=10)]
    assert answer.message_id not in plain  # it shares no word with the query
    hits = search_in_context(store, "lighthouse festival", k=10)
    ids = [h.message_id for h in hits]
    assert ids[0] == question.message_id
    assert ids.index(answer.message_id) < ids.index(weak.message_id)
    scores = {h.message_id: h.score for h in hits}
    own = {h.message_id: h.score for h in store.search("lighthouse festival", k=10)}
    assert scores[answer.message_id] == pytest.approx(0.5 * own[question.message_id])
    assert scores[question.message_id] == pytest.approx(own[question.message_id])  # its neighbours score 0
    assert scores[weak.message_id] == pytest.approx(own[weak.message_id])
    assert hits[0].snippet and "**lighthouse**" in hits[0].snippet.lower()


def test_neighbours_are_by_position_in_the_conversation(store: TranscriptStore) -> None:
    """Conversations appended in turns: a message's neighbour is the next message of its own
    conversation, however many rows of other conversations lie between them."""
    first = say(store, "a", "where did you put the zeppelin model?")[0]
    for _ in range(30):
        say(store, "b", FILLER)
    reply = say(store, "a", "on the top shelf, next to the books")[0]
    say(store, "b", "the zeppelin is a kind of airship")
    hits = search_in_context(store, "zeppelin model", k=5)
    assert reply.message_id in {h.message_id for h in hits}
    assert hits[0].message_id == first.message_id


def test_more_neighbours_reach_further(store: TranscriptStore) -> None:
    say(store, "c1", *[FILLER] * 4)
    source, near, far = say(store, "c1", "the lighthouse keeper retired", "really?", "yes, last spring")
    say(store, "c1", *[FILLER] * 4)
    one = {h.message_id for h in search_in_context(store, "lighthouse", k=10)}
    two = {h.message_id for h in search_in_context(store, "lighthouse", k=10, neighbours=2)}
    assert near.message_id in one and far.message_id not in one
    assert {source.message_id, near.message_id, far.message_id} <= two


def test_ties_are_stable(store: TranscriptStore) -> None:
    for conversation in ("c1", "c2", "c3"):
        say(store, conversation, "the lighthouse festival", "what a night")
    say(store, "c4", *[FILLER] * 6)
    first = search_in_context(store, "lighthouse festival", k=6)
    assert len(first) == 6
    assert [h.message_id for h in first[:3]] == sorted(h.message_id for h in first[:3])
    assert [h.message_id for h in first[3:]] == sorted(h.message_id for h in first[3:])
    assert len({h.score for h in first[:3]}) == 1 and len({h.score for h in first[3:]}) == 1
    for _ in range(3):
        assert search_in_context(store, "lighthouse festival", k=6) == first


def test_k_is_respected_and_the_pool_grows(store: TranscriptStore) -> None:
    for i in range(40):
        say(store, "c1", f"lighthouse number {i}" if i % 2 else FILLER)
    for k in (1, 3, 10):
        assert len(search_in_context(store, "lighthouse", k=k)) == k
        assert len(search_in_context(store, "lighthouse", k=k, pool=k)) == k
    everything = search_in_context(store, "lighthouse", k=1000)
    assert len(everything) == 40  # 20 matches and their 20 neighbours
    assert [h.message_id for h in search_in_context(store, "lighthouse", k=7, pool=7)] == \
        [h.message_id for h in everything[:7]]


def test_filters_apply_to_results_and_to_context(store: TranscriptStore) -> None:
    user, assistant = say(store, "c1", "tell me about the lighthouse", kind="user")[0], \
        say(store, "c1", "the lighthouse was built in 1870", kind="assistant")[0]
    after = say(store, "c1", "and who lived there?", kind="user")[0]
    say(store, "c2", "a lighthouse in another conversation", "nothing else", kind="user")
    say(store, "c1", *[FILLER] * 5)
    hits = search_in_context(store, "lighthouse", kinds=["user"], k=10)
    assert {h.kind for h in hits} == {"user"} and {h.message_id for h in hits} >= {user.message_id}
    assert assistant.message_id not in {h.message_id for h in hits}
    scores = {h.message_id: h.score for h in hits}
    # the assistant turn is filtered out, so it lends nothing to the user turn after it
    assert after.message_id not in scores
    in_c1 = search_in_context(store, "lighthouse", conversation="c1", k=10)
    assert {h.conversation_id for h in in_c1} == {"c1"}
    cut = parse_time(user.captured_at) + timedelta(minutes=30)
    late = search_in_context(store, "lighthouse", since=cut, k=10)
    assert user.message_id not in {h.message_id for h in late}
    assert all(parse_time(h.captured_at) >= cut for h in late)
    assert search_in_context(store, "lighthouse", agent="ada", sources=["tool"], k=10) == []


def test_weights_zero_give_the_stores_search(store: TranscriptStore) -> None:
    vocabulary = ["lighthouse", "keeper", "festival", "june", "boat", "the", "coast", "memory"]
    rng = random.Random(3)
    for i in range(80):
        say(store, f"c{i % 3}", " ".join(rng.choices(vocabulary, k=rng.randint(1, 8))),
            agent=("ada", "bob")[i % 2], kind=("user", "assistant")[i % 2])
    for query, options in [("lighthouse keeper", {}), ("festival in june", {"kinds": ["user"]}),
                           ("coast boat", {"agent": "bob", "conversation": "c1"})]:
        want = store.search(query, k=15, **options)
        got = search_in_context(store, query, k=15, weight=0.0, date_weight=0.0, **options)
        assert got == want
        assert search_in_context(store, query, k=15, neighbours=0, date_weight=0.0, **options) == want


def test_bad_arguments_are_clear_errors(store: TranscriptStore) -> None:
    say(store, "c1", "lighthouse")
    for kwargs in ({"k": 0}, {"k": 1001}, {"neighbours": -1}, {"neighbours": 51}, {"neighbours": True},
                   {"weight": -0.1}, {"weight": "x"}, {"weight": float("nan")}, {"date_weight": 11}):
        with pytest.raises(MemrepoError):
            search_in_context(store, "lighthouse", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(MemrepoError, match="no words"):
        search_in_context(store, "?!")
    with pytest.raises(MemrepoError):
        search_in_context(store, "lighthouse", agent="nobody")
    with pytest.raises(MemrepoError):
        search_in_context(store, "lighthouse", conversation="nope")
    assert search_in_context(store, "zeppelin") == []


# -------------------------------------------------------------------------- dates

def test_query_periods() -> None:
    day = datetime(2023, 10, 13, tzinfo=UTC)
    assert query_periods("what did she show on October 13, 2023?") == [Period(day, day + timedelta(days=1))]
    assert query_periods("on 13th of October 2023") == [Period(day, day + timedelta(days=1))]
    assert query_periods("notes from 2023-10-13") == [Period(day, day + timedelta(days=1))]
    month = datetime(2023, 12, 1, tzinfo=UTC)
    assert query_periods("what happened in December 2023") == [Period(month, datetime(2024, 1, 1, tzinfo=UTC))]
    assert query_periods("camping in June") == [Period(None, None, 6)]
    assert query_periods("may I ask what you may know") == []
    assert query_periods("on 2023-02-30") == []
    assert query_periods("no dates here, only 2023") == []


def test_period_contains_a_week_after() -> None:
    day = Period(datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 2, tzinfo=UTC))
    assert day.contains(datetime(2023, 6, 1, 12, tzinfo=UTC))
    assert day.contains(datetime(2023, 6, 8, 23, tzinfo=UTC))
    assert not day.contains(datetime(2023, 6, 9, 1, tzinfo=UTC))
    assert not day.contains(datetime(2023, 5, 31, tzinfo=UTC))
    june = Period(None, None, 6)
    assert june.contains(datetime(2021, 6, 30, tzinfo=UTC)) and june.contains(datetime(2024, 7, 3, tzinfo=UTC))
    assert not june.contains(datetime(2024, 7, 20, tzinfo=UTC))


def test_a_named_month_prefers_messages_captured_then(store: TranscriptStore) -> None:
    clock = store.clock
    assert isinstance(clock, StoreClock)
    clock.now = parse_time("2023-03-10T00:00:00Z")
    march = say(store, "c1", "we went camping by the lake")[0]
    clock.now = parse_time("2023-06-20T00:00:00Z")
    june = say(store, "c1", "we went camping by the lake")[0]
    say(store, "c1", *[FILLER] * 4)
    assert march.message_id < june.message_id  # a plain tie would put March first
    hits = search_in_context(store, "when did we go camping in June?", k=2, neighbours=0)
    assert [h.message_id for h in hits] == [june.message_id, march.message_id]
    assert hits[0].score == pytest.approx(1.5 * hits[1].score)
    off = search_in_context(store, "when did we go camping in June?", k=2, neighbours=0, date_weight=0.0)
    assert [h.message_id for h in off] == [march.message_id, june.message_id]


# ------------------------------------------------------- against scoring every message

def brute_force(store: TranscriptStore, query: str, k: int, neighbours: int, weight: float,
                date_weight: float, keep: Callable[[Message], bool]) -> list[tuple[str, float]]:
    """The definition: every message of every agent scored in Python, fused with its
    neighbours by log position, the date preference applied, filtered, sorted."""
    units = parse_query(query)
    periods = query_periods(query) if date_weight else []
    out = []
    for agent in store.agents():
        logs = {c: store.read(agent, c) for c in store.conversations(agent)}
        streams = {m.message_id: tokenize(m.text) for rows in logs.values() for m in rows}
        n = len(streams)
        avgdl = sum(len(t) for t in streams.values()) / n
        df = {u: sum(1 for t in streams.values() if bm25.count(t, u.tokens)) for u in units}

        def own(m: Message, df: dict = df, streams: dict = streams, n: int = n, avgdl: float = avgdl) -> float:
            tokens = streams[m.message_id]
            if not keep(m):
                return 0.0
            return bm25.score([bm25.idf(n, df[u]) for u in units], [bm25.count(tokens, u.tokens) for u in units],
                              len(tokens), avgdl)

        for rows in logs.values():
            scores = [own(m) for m in rows]
            for i, m in enumerate(rows):
                if not keep(m):
                    continue
                window = range(max(0, i - neighbours), min(len(rows), i + neighbours + 1))
                around = [scores[j] for j in window if j != i]
                value = scores[i] + weight * max(around, default=0.0)
                if any(p.contains(parse_time(m.captured_at)) for p in periods):
                    value *= 1.0 + date_weight
                if value > 0.0:
                    out.append((-value, agent, m.message_id))
    out.sort()
    return [(mid, -value) for value, _, mid in out[:k]]


def agree(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    """Same scores in the same order; the same messages, except where equal scores meet the cut."""
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9, abs=1e-12)
    if got:
        last = got[-1][1]
        assert {m for m, s in got if s > last * (1 + 1e-9)} == {m for m, s in want if s > last * (1 + 1e-9)}


@pytest.mark.parametrize("seed", range(8))
def test_search_in_context_equals_scoring_every_message(tmp_path: Path, seed: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(retrieval, "WINDOW_SLACK", rng.choice([0, 6]))  # 0: neighbours found by query
    vocabulary = ["lighthouse", "keeper", "festival", "june", "boat", "the", "coast", "memory", "what", "is",
                  "camping", "october"]
    weights = [1 / (r + 1) for r in range(len(vocabulary))]
    clock = hourly()
    clock.now = parse_time("2023-05-20T00:00:00Z")
    with TranscriptStore(tmp_path / f"home{seed}", fsync=False, clock=clock) as store:
        for _ in range(rng.randint(40, 120)):
            clock.now += timedelta(hours=rng.choice([1, 30]))
            conversation = f"c{rng.randint(0, 3)}" if rng.random() < 0.5 else "c0"  # interleaved and runs
            store.append(rng.choice(["ada", "ada", "bob"]), conversation, rng.choice(["user", "assistant"]),
                         " ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 9))))
        for _ in range(6):
            words = rng.sample(vocabulary, rng.randint(1, 3))
            query = " ".join(words) + rng.choice(["", " in June", " on 2023-06-03"])
            k = rng.choice([1, 3, 10])
            neighbours = rng.choice([1, 2])
            weight = rng.choice([0.25, 0.5, 1.0])
            date_weight = rng.choice([0.0, 0.5])
            pool = rng.choice([None, k])
            got = search_in_context(store, query, k=k, neighbours=neighbours, weight=weight,
                                    date_weight=date_weight, pool=pool)
            agree([(h.message_id, h.score) for h in got],
                  brute_force(store, query, k, neighbours, weight, date_weight, lambda m: True))
            got = search_in_context(store, query, k=k, neighbours=neighbours, weight=weight,
                                    date_weight=date_weight, pool=pool, kinds=["user"], agent="ada")
            agree([(h.message_id, h.score) for h in got],
                  brute_force(store, query, k, neighbours, weight, date_weight,
                              lambda m: m.kind == "user" and m.agent_id == "ada"))
