"""Search: exact BM25 (checked against FTS5's bm25() and against scoring every message),
ranking sanity, filters, time ranges and snippets."""

from __future__ import annotations

import math
import random
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.transcript import TranscriptStore, bm25, documents, search
from bot.transcript.tokenize import parse_query, tokenize
from tests.conftest import StoreClock


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    clock = StoreClock("2024-05-01T00:00:00Z", timedelta(hours=1))
    with TranscriptStore(tmp_path / "home", fsync=False, clock=clock) as s:
        yield s


def brute_force(store: TranscriptStore, agent: str, query: str, k: int, keep=lambda m: True) -> list[tuple[str, float]]:
    """Score every message of the agent in Python: the definition the search must meet."""
    messages = [m for c in store.conversations(agent) for m in store.read(agent, c)]
    streams = {m.message_id: tokenize(m.text) for m in messages}
    n = len(messages)
    avgdl = sum(len(t) for t in streams.values()) / n
    units = parse_query(query)
    df = {u: sum(1 for t in streams.values() if bm25.count(t, u.tokens)) for u in units}
    scored = []
    for m in messages:
        tokens = streams[m.message_id]
        tfs = [bm25.count(tokens, u.tokens) for u in units]
        if keep(m) and any(tfs):
            scored.append((m.message_id, bm25.score([bm25.idf(n, df[u]) for u in units], tfs, len(tokens), avgdl)))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored[:k]


def same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [g[0] for g in got] == [w[0] for w in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)


def zipf_corpus(store: TranscriptStore, seed: int, count: int = 150) -> list[str]:
    rng = random.Random(seed)
    vocab = ["the", "memory", "agent", "deploy", "friday", "schedule", "review", "cache", "token", "budget",
             "incident", "runbook", "lighthouse", "zeppelin", "메모리를", "회사에서", "記憶を", "记忆力"]
    weights = [1 / (r + 1) ** 1.1 for r in range(len(vocab))]
    for i in range(count):
        words = rng.choices(vocab, weights, k=rng.randint(1, 12))
        store.append("ada", f"c{i % 4}", ("user", "assistant", "tool_result")[i % 3], " ".join(words),
                     source="tool:grep" if i % 3 == 2 else None)
    return vocab


@pytest.mark.parametrize("seed", range(12))
def test_search_equals_scoring_every_message(store: TranscriptStore, seed: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = zipf_corpus(store, seed)
    rng = random.Random(1000 + seed)
    monkeypatch.setattr(search, "SCAN_LIMIT", rng.choice([0, 3000]))
    for _ in range(8):
        words = rng.sample(vocab, rng.randint(1, 4))
        query = " ".join(words) if rng.random() < 0.7 else f'"{words[0]} {rng.choice(vocab)}" {words[-1]}'
        k = rng.choice([1, 3, 10, 50])
        got = [(h.message_id, h.score) for h in store.search(query, agent="ada", k=k)]
        same(got, brute_force(store, "ada", query, k))
        kinds = rng.sample(["user", "assistant", "tool_result"], 2)
        got = [(h.message_id, h.score) for h in store.search(query, agent="ada", k=k, kinds=kinds, conversation="c1")]
        wanted = set(kinds)
        same(got, brute_force(store, "ada", query, k, lambda m, w=wanted: m.kind in w and m.conversation_id == "c1"))


def test_python_bm25_with_fts5_idf_equals_fts5_bm25(store: TranscriptStore) -> None:
    """bm25.py's term shares are FTS5's bm25() (k1, b, length normalisation, phrases): with
    FTS5's idf, the same token streams in a plain FTS5 table score the same."""
    zipf_corpus(store, 7)
    index = store._index("ada")
    n, total = index.stats()
    plain = sqlite3.connect(":memory:")
    plain.execute("CREATE VIRTUAL TABLE f USING fts5(tokens, tokenize='ascii')")
    plain.executemany("INSERT INTO f(rowid, tokens) VALUES (?, ?)",
                      index.conn.execute("SELECT rowid, tokens FROM messages"))
    for query in ["memory", "the deploy", "lighthouse zeppelin agent", '"memory agent"', "記憶", "메모리"]:
        units = parse_query(query)
        expression = " OR ".join(u.fts() for u in units)
        rows = plain.execute("SELECT tokens, bm25(f) FROM f WHERE f MATCH ?", (expression,)).fetchall()
        assert rows
        dfs = {u: plain.execute("SELECT count(*) FROM f WHERE f MATCH ?", (u.fts(),)).fetchone()[0] for u in units}
        for text, fts_score in rows:
            tokens = text.split()
            mine = bm25.score([bm25.fts5_idf(n, dfs[u]) for u in units], [bm25.count(tokens, u.tokens) for u in units],
                              len(tokens), total / n)
            assert mine == pytest.approx(-fts_score, rel=1e-12)
    known = index.dfs(["memory", "nope"])
    assert known["memory"][0] == index.count('"memory"') and known["nope"] == (0, {})


def test_skyline_bound_is_the_best_share_any_message_gets(store: TranscriptStore) -> None:
    vocab = zipf_corpus(store, 11, 200)
    store.append("ada", "c9", "user", "memory memory memory agent")  # many occurrences, short
    index = store._index("ada")
    n, total = index.stats()
    rows = [(t.split(), length) for t, length in index.conn.execute("SELECT tokens, length FROM messages")]
    for word in vocab:
        term = tokenize(word)[0]
        df, points = index.dfs([term])[term]
        idf = bm25.idf(n, df)
        best = max(bm25.term_score(idf, toks.count(term), length, total / n) for toks, length in rows)
        assert bm25.tight_bound(idf, points, total / n) == pytest.approx(best, rel=1e-12)
        assert best <= bm25.upper_bound(idf)


@pytest.mark.parametrize(("n_rows", "n_hits"), [(1, 1), (2, 1), (2, 2), (10, 5), (10, 10), (1000, 999)])
def test_idf_is_positive_even_for_a_term_in_every_message(n_rows: int, n_hits: int) -> None:
    """Lucene's idf: a term in half the messages or more still counts (FTS5's idf is 0 or
    negative there), and a rarer term always counts more."""
    value = bm25.idf(n_rows, n_hits)
    assert value == pytest.approx(math.log(1 + (n_rows - n_hits + 0.5) / (n_hits + 0.5)))
    assert value > 1e-4
    assert n_hits == 1 or bm25.idf(n_rows, n_hits - 1) > value


def test_a_word_in_every_message_still_ranks_by_frequency_and_length(store: TranscriptStore) -> None:
    """With FTS5's floored idf every message scored 1e-6 times something: a word in every
    message ranks the ones it says most about first, with a score that says it matched."""
    short = store.append("ada", "c1", "user", "ledger ledger")
    long = store.append("ada", "c1", "user", "ledger and many other words about other things")
    hits = store.search("ledger", agent="ada", k=5)
    assert [h.message_id for h in hits] == [short.message_id, long.message_id]
    assert hits[0].score > hits[1].score > 0.1


def test_memory_files_a_word_in_every_file_scores_above_zero() -> None:
    """Memory-file search scores with the same idf: a word every file holds ranks them by how
    much each says about it, none scored 0."""
    ranked = documents.ranked({"a.md": "ledger on postgres, among other notes", "b.md": "postgres"}, "postgres")
    assert [path for path, _ in ranked] == ["b.md", "a.md"]
    assert ranked[1][1] > 0.1


def test_skyline_helpers() -> None:
    assert bm25.skyline({1: 3, 2: 5, 3: 4, 5: 40}) == {5: 40, 3: 4, 1: 3}
    assert bm25.merge_skylines({1: 9}, {1: 4, 2: 2}) == {2: 2}
    assert bm25.decode_skyline(bm25.encode_skyline({2: 7, 1: 3})) == {1: 3, 2: 7}


def test_fts5_is_available() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='ascii')")


def test_rarer_terms_rank_higher(store: TranscriptStore) -> None:
    for i in range(20):
        store.append("ada", "c1", "user", f"common words number {i}")
    rare = store.append("ada", "c1", "user", "common words and a zeppelin")
    hits = store.search("common zeppelin", agent="ada", k=3)
    assert hits[0].message_id == rare.message_id
    assert hits[0].score > hits[1].score


def test_shorter_messages_and_more_occurrences_rank_higher(store: TranscriptStore) -> None:
    long = store.append("ada", "c1", "user", "budget " + "filler " * 30)
    short = store.append("ada", "c1", "user", "budget review")
    twice = store.append("ada", "c1", "user", "budget budget review")
    for i in range(10):
        store.append("ada", "c1", "user", f"unrelated {i}")
    ids = [h.message_id for h in store.search("budget", k=3)]
    assert ids == [twice.message_id, short.message_id, long.message_id]


def test_phrase_needs_the_words_together(store: TranscriptStore) -> None:
    together = store.append("ada", "c1", "user", "the deploy schedule slipped")
    store.append("ada", "c1", "user", "schedule the deploy later")
    for i in range(5):
        store.append("ada", "c1", "user", f"noise {i}")
    assert [h.message_id for h in store.search('"deploy schedule"')] == [together.message_id]


def test_filters(store: TranscriptStore) -> None:
    a = store.append("ada", "c1", "user", "search me please")
    b = store.append("ada", "c1", "tool_result", "search me from grep", source="tool:grep")
    c = store.append("ada", "c2", "assistant", "search me as the agent")
    d = store.append("ada", "c2", "user", "search me from the web", source="external:https://example.com/a")
    e = store.append("bob", "c1", "user", "search me in bob's memory")

    def ids(**kw: object) -> set[str]:
        return {h.message_id for h in store.search("search", k=50, **kw)}

    assert ids() == {a.message_id, b.message_id, c.message_id, d.message_id, e.message_id}
    assert ids(agent="ada") == {a.message_id, b.message_id, c.message_id, d.message_id}
    assert ids(agent="ada", conversation="c2") == {c.message_id, d.message_id}
    assert ids(conversation="c1") == {a.message_id, b.message_id, e.message_id}
    assert ids(kinds=["user"]) == {a.message_id, d.message_id, e.message_id}
    assert ids(sources=["tool"]) == {b.message_id}
    assert ids(sources=["tool:grep", "agent"]) == {b.message_id, c.message_id}
    assert ids(sources=["external"]) == {d.message_id}
    with pytest.raises(MemrepoError, match="kind 'robot' is not one of"):
        ids(kinds=["robot"])
    with pytest.raises(MemrepoError, match="source filter 'tools' is not valid"):
        ids(sources=["tools"])
    with pytest.raises(MemrepoError, match="no transcripts for agent 'zed'; known agents: ada, bob"):
        ids(agent="zed")
    with pytest.raises(MemrepoError, match="no conversation 'c9'"):
        ids(conversation="c9")


def test_time_ranges(store: TranscriptStore) -> None:
    # The clock starts at 2024-05-01T00:00Z and each append is an hour later.
    made = [store.append("ada", "c1", "user", f"hourly note {i}") for i in range(30)]

    def ids(**kw: object) -> list[str]:
        return sorted(h.message_id for h in store.search("hourly", k=100, **kw))

    assert ids(since="2024-05-02") == sorted(m.message_id for m in made[23:])
    assert ids(until="2024-05-01") == sorted(m.message_id for m in made[:23])  # the whole day
    assert ids(since="2024-05-01T05:00:00Z", until="2024-05-01T07:00:00Z") == sorted(
        m.message_id for m in made[4:7])  # both ends included
    assert ids(since="2024-05-01T14:00:00+09:00", until="2024-05-01T05:00") == [made[4].message_id]
    assert ids(since="2030-01-01") == []
    with pytest.raises(MemrepoError, match="cannot read 'last week' as a date"):
        ids(since="last week")


def test_snippets_mark_the_matches(store: TranscriptStore) -> None:
    store.append("ada", "c1", "user", "Lorem ipsum " * 40 + "and then we were Remembering the lighthouse. " +
                 "dolor sit amet " * 40)
    store.append("ada", "c1", "user", "私は記憶を失った")
    store.append("ada", "c1", "user", "우리 회사에서 메모리를 샀다")
    for i in range(3):
        store.append("ada", "c1", "user", f"filler {i}")
    hit = store.search("remember lighthouse")[0]
    assert "**Remembering**" in hit.snippet and "**lighthouse**" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 220
    assert store.search("記憶")[0].snippet == "私は**記憶**を失った"
    assert store.search("메모리")[0].snippet == "우리 회사에서 **메모리를** 샀다"


@pytest.mark.parametrize(("query", "text"), [
    ("메모리", "메모리를 정리했다"),
    ("회사", "회사에서 일해요"),
    ("記憶", "記憶を取り戻す"),
    ("记忆", "我的记忆力很好"),
    ("remembering", "I remember that"),
])
def test_cjk_and_stems_end_to_end(store: TranscriptStore, query: str, text: str) -> None:
    target = store.append("ada", "c1", "user", text)
    store.append("ada", "c1", "user", "completely different words")
    store.append("ada", "c1", "user", "다른 문장입니다 別の文")
    assert [h.message_id for h in store.search(query)] == [target.message_id]


def test_query_errors(store: TranscriptStore) -> None:
    store.append("ada", "c1", "user", "x y z")
    with pytest.raises(MemrepoError, match="the query has no words to search for"):
        store.search("?!... —")
    for k in (0, -1, 1001, 2.5, True):
        with pytest.raises(MemrepoError, match="-k must be a whole number"):
            store.search("x", k=k)  # type: ignore[arg-type]


def test_no_transcripts_at_all(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "empty") as s:
        assert s.search("anything") == []
        with pytest.raises(MemrepoError, match="known agents: none yet"):
            s.search("anything", agent="ada")


WORDS = ["remembering", "remembered", "remember", "dying", "die", "skies", "sky", "possibility", "possibly",
         "generously", "generous", "running", "ran", "runs", "user's", "users", "don't", "2024", "memory", "memories",
         "ability", "abilities", "organization", "organize"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=15), st.lists(st.sampled_from(WORDS), min_size=1,
                                                                          max_size=3))
def test_snippet_marks_every_word_that_matched(text_words: list[str], query_words: list[str]) -> None:
    from bot.transcript.snippet import marks
    from bot.transcript.tokenize import _tokenize_any

    text = " ".join(text_words) + "."
    wanted = set(tokenize(" ".join(query_words), query=True))
    expected = [w for w in text_words if set(_tokenize_any(w, False)) & wanted]
    assert [text[a:b].lower() for a, b in marks(text, wanted)] == [w.lower() for w in expected]
