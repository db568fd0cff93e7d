"""The tokenizer: tables for each script and rule, and properties (never raises, tokens stay
whole under FTS5's ascii tokenizer)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.transcript.tokenize import Unit, hangul_stems, parse_query, tokenize


def finds(query: str, text: str) -> bool:
    """Whether a query token is among the text's index tokens (what FTS5 would match)."""
    return bool(set(tokenize(query, query=True)) & set(tokenize(text)))


@pytest.mark.parametrize(("text", "tokens"), [
    ("Hello, World!", ["hello", "world"]),
    ("remembering remembered remember", ["rememb", "rememb", "rememb"]),
    ("running runs", ["run", "run"]),
    ("The user's memories", ["the", "user", "memori"]),
    ("don't", ["dont"]),
    ("café naïve", ["cafe", "naiv"]),
    ("ＡＢＣ１２３", ["abc123"]),
    ("ﬁne STRASSE straße", ["fine", "strass", "strass"]),
    ("v2.3.1 build#42", ["v2", "3", "1", "build", "42"]),
    ("snake_case", ["snake", "case"]),
    ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),
    ("Привет мир", ["привет", "мир"]),
    ("!!! ... ??? — 🙂", []),
    ("", []),
])
def test_alphabetic_words(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(("word", "stems"), [
    ("메모리를", ["메모리"]),
    ("회사에서", ["회사"]),
    ("사람들이", ["사람들", "사람"]),
    ("책을", ["책"]),
    ("회사", []),
    ("을", []),
])
def test_hangul_particles(word: str, stems: list[str]) -> None:
    assert hangul_stems(word) == stems


@pytest.mark.parametrize(("query", "text", "found"), [
    ("메모리", "메모리를 정리했다", True),
    ("회사", "회사에서 일해요", True),
    ("책", "책을 읽었다", True),
    ("메모리를", "메모리에 저장", True),  # both reduce to 메모리
    ("고양이", "강아지를 좋아해", False),
    ("記憶", "私は記憶を失った", True),
    ("記", "記憶を", True),  # one character finds it through the unigrams
    ("記憶", "日記を書いた", False),
    ("记忆", "我的记忆力很好", True),
    ("记忆力", "我的记忆力很好", True),
    ("カタカナ", "ｶﾀｶﾅで書く", True),  # half-width kana are normalised
    ("remembering", "I remember it", True),
    ("runs", "running late", True),
    ("Memory", "memory", True),
    ("claude", "Claude는 메모리를 좋아해", True),
    ("메모리", "Claude는 메모리를 좋아해", True),
])
def test_query_finds_text(query: str, text: str, found: bool) -> None:
    assert finds(query, text) is found


def test_cjk_index_and_query_forms() -> None:
    assert tokenize("記憶を") == ["記", "記憶", "憶", "憶を", "を"]
    assert tokenize("記憶を", query=True) == ["記憶", "憶を"]
    assert tokenize("記", query=True) == ["記"]
    assert tokenize("2024年5月") == ["2024", "年", "5", "月"]


def test_hangul_word_stem_then_bigrams() -> None:
    assert tokenize("메모리를") == ["메모리를", "메모리", "메모", "모리", "리를"]
    assert tokenize("회사") == ["회사"]


@pytest.mark.parametrize(("query", "units"), [
    ("deploy schedule", [("deploy",), ("schedul",)]),
    ('"deploy schedule" friday', [("deploy", "schedul"), ("friday",)]),
    ("memory memory MEMORY", [("memori",)]),
    ('"記憶"', [("記", "記憶", "憶")]),
    ('"unclosed phrase here', [("unclos", "phrase", "here")]),
    ('"one"', [("one",)]),
    ("!!! ???", []),
    ('""', []),
])
def test_parse_query(query: str, units: list[tuple[str, ...]]) -> None:
    assert parse_query(query) == [Unit(u) for u in units]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_tokenizes_into_clean_tokens(text: str) -> None:
    for query in (False, True):
        for token in tokenize(text, query=query):
            assert token
            assert not any(ch.isspace() for ch in token)
            assert not any(ch.isascii() and not ch.isalnum() for ch in token)
    parse_query(text)


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_fts5_ascii_tokenizer_keeps_every_token_whole(text: str) -> None:
    tokens = tokenize(text)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(t, tokenize='ascii')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    conn.execute("INSERT INTO f(rowid, t) VALUES (1, ?)", (" ".join(tokens),))
    assert [row[0] for row in conn.execute("SELECT term FROM v ORDER BY offset")] == tokens


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=127)))
def test_ascii_fast_path_equals_the_general_rules(text: str) -> None:
    from bot.transcript.tokenize import _tokenize_any

    assert tokenize(text) == _tokenize_any(text, False)
    assert tokenize(text, query=True) == _tokenize_any(text, True)
