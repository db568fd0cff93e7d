"""The one tokenizer for indexing and querying transcripts, in Python and pure.

SQLite's tokenizers know nothing of Korean particles or of text written without spaces, so
every message is turned into a normalised token stream here and FTS5 only splits that stream
on spaces. The same functions analyse queries, so a query token matches exactly when the
text produced the same token.

Rules, applied to NFKC-normalised, case-folded text:

- Words in alphabetic scripts (runs of letters, digits and combining marks; an apostrophe
  inside a word is dropped): Latin letters lose their diacritics ("café" -> "cafe"), and a
  word of ASCII letters is stemmed with the Snowball English (Porter2) stemmer
  ("remembering" and "remember" -> "rememb", "runs" -> "run"; irregular forms such as
  "ran" stay apart).
- Hangul runs: the word itself, the word with a trailing particle or copula removed (up to
  two: "사람들이" -> "사람들", "사람"), then the word's character bigrams. "메모리" finds
  "메모리를" (by the stem) and "회사" finds "회사에서" (by the stem and the bigram).
- Han, kana and other CJK runs: character bigrams, which find words inside text written
  without spaces ("記憶" finds "記憶を", "记忆" finds "我的记忆力"). The index also keeps every
  character on its own, interleaved (c1, c1c2, c2, c2c3, ...), so that a one-character query
  finds it; a query of two or more characters uses the bigrams only.

Tokens never contain ASCII punctuation or spaces, so FTS5's `ascii` tokenizer keeps each one
whole and its counts (document length, term frequency) equal this module's exactly.

Queries (not the index) leave out English function words ("what", "did", "the", ...):
in a question they carry no topic, yet their idf is real (lower, the more messages hold
them) and it pulls up messages that merely share them. A query made only of such words
keeps them, so "how is it" still searches; quoted phrases keep every word.
"""

from __future__ import annotations

import importlib.metadata
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

# Bump when a rule above changes: the index records it and is rebuilt when it differs.
RULES_VERSION = 1

MAX_TOKEN_CHARS = 64  # longer words (hashes, base64) are cut, the same way on both sides

_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uffa0-\uffdc"
_CJK = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U000323af"
)
_APOSTROPHES = "'\u2019"

# Korean particles and copula endings, stripped from the end of a Hangul word (longest first).
PARTICLES = tuple(sorted({
    "이", "가", "은", "는", "을", "를", "의", "에", "에서", "에게", "에게서", "께", "께서", "한테",
    "한테서", "로", "으로", "로서", "으로서", "로써", "으로써", "와", "과", "도", "만", "까지", "부터",
    "보다", "처럼", "같이", "마다", "조차", "마저", "밖에", "뿐", "이나", "나", "이랑", "랑", "하고",
    "에서는", "에는", "에도", "에서도", "으로는", "로는", "와는", "과는", "이라고", "라고", "이다",
    "입니다", "이에요", "예요", "이야", "야", "들",
}, key=len, reverse=True))


def _script_ranges(ranges: str) -> list[tuple[int, int]]:
    out = []
    i = 0
    while i < len(ranges):
        lo = ord(ranges[i])
        if i + 2 < len(ranges) and ranges[i + 1] == "-":
            out.append((lo, ord(ranges[i + 2])))
            i += 3
        else:
            out.append((lo, lo))
            i += 1
    return out


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The run pattern, built once: word characters are Unicode letters, digits and marks
    outside the Hangul and CJK ranges (which get their own runs)."""
    excluded = bytearray(0xE01F0)
    for lo, hi in _script_ranges(_HANGUL) + _script_ranges(_CJK):
        excluded[lo : hi + 1] = b"\x01" * (hi - lo + 1)
    category = unicodedata.category
    parts: list[tuple[int, int]] = []
    start = previous = -2
    for cp in (*range(0x30000), *range(0xE0000, 0xE01F0)):
        if not excluded[cp] and category(chr(cp))[0] in "LNM":
            if cp != previous + 1:
                if start >= 0:
                    parts.append((start, previous))
                start = cp
            previous = cp
    parts.append((start, previous))
    word = "".join(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
                   for lo, hi in parts)
    runs = re.compile(
        f"([{_HANGUL}]+)|([{_CJK}]+)|([{word}]+(?:[{_APOSTROPHES}][{word}]+)*)"
    )
    marks_only = re.compile(r"[\W_]*")
    return runs, marks_only


_stemmer = snowballstemmer.stemmer("english")
_word_cache: dict[str, str | None] = {}
_hangul_cache: dict[str, tuple[str, ...]] = {}
_CACHE_LIMIT = 200_000


@lru_cache(maxsize=1)
def tokenizer_version() -> str:
    """What the index must be rebuilt for: these rules, the Unicode tables, the stemmer."""
    try:
        stemmer = importlib.metadata.version("snowballstemmer")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - vendored installs
        stemmer = "unknown"
    return f"rules={RULES_VERSION};unicode={unicodedata.unidata_version};snowball={stemmer}"


def normalize(text: str) -> str:
    """NFKC and case folding: full-width forms, ligatures and case stop mattering."""
    return unicodedata.normalize("NFKC", text).casefold()


def _strip_latin_marks(word: str) -> str:
    if all(ord(ch) < 0x250 or 0x1E00 <= ord(ch) <= 0x1EFF or unicodedata.category(ch)[0] == "M"
           for ch in word):
        decomposed = unicodedata.normalize("NFD", word)
        word = unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))
    return word


def _word_token(word: str) -> str | None:
    """One token for a word of an alphabetic script (None for a run of marks alone)."""
    token = _word_cache.get(word)
    if token is not None or word in _word_cache:
        return token
    original = word
    for apostrophe in _APOSTROPHES:
        word = word.replace(apostrophe, "")
    if not word.isascii():
        word = _strip_latin_marks(word)
    if _patterns()[1].fullmatch(word):
        result = None
    else:
        if word.isascii() and word.isalpha():
            word = _stemmer.stemWord(word)
        result = word[:MAX_TOKEN_CHARS]
    if len(_word_cache) >= _CACHE_LIMIT:
        _word_cache.clear()
    _word_cache[original] = result
    return result


def hangul_stems(word: str) -> list[str]:
    """The word without its trailing particles (at most two, each leaving a syllable)."""
    stems = []
    current = word
    for _ in range(2):
        for particle in PARTICLES:
            if len(current) > len(particle) and current.endswith(particle):
                current = current[: -len(particle)]
                stems.append(current)
                break
        else:
            break
    return stems


def _hangul_tokens(word: str) -> tuple[str, ...]:
    cached = _hangul_cache.get(word)
    if cached is not None:
        return cached
    word_cut = word[:MAX_TOKEN_CHARS]
    tokens = [word_cut]
    tokens.extend(stem for stem in hangul_stems(word_cut))
    if len(word_cut) > 2:
        tokens.extend(word_cut[i : i + 2] for i in range(len(word_cut) - 1))
    seen: set[str] = set()
    unique = tuple(t for t in tokens if not (t in seen or seen.add(t)))  # type: ignore[func-returns-value]
    if len(_hangul_cache) >= _CACHE_LIMIT:
        _hangul_cache.clear()
    _hangul_cache[word] = unique
    return unique


def _cjk_tokens(run: str, query: bool) -> list[str]:
    if len(run) == 1:
        return [run]
    if query:
        return [run[i : i + 2] for i in range(len(run) - 1)]
    out = []
    for i in range(len(run) - 1):
        out.append(run[i])
        out.append(run[i : i + 2])
    out.append(run[-1])
    return out


_ASCII_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def tokenize(text: str, *, query: bool = False) -> list[str]:
    """The token stream of `text`: index form by default, query form with `query=True`
    (which differs only for CJK runs: bigrams without the single characters)."""
    if text.isascii():  # fast path, same result: ASCII text has only alphabetic words
        cache = _word_cache
        return [cache.get(word) or _word_token(word)  # type: ignore[misc]
                for word in _ASCII_WORDS.findall(text.lower())]
    return _tokenize_any(text, query)


def _tokenize_any(text: str, query: bool) -> list[str]:
    runs, _ = _patterns()
    tokens: list[str] = []
    append = tokens.append
    extend = tokens.extend
    for match in runs.finditer(normalize(text)):
        word = match.group(3)
        if word is not None:
            token = _word_token(word)
            if token is not None:
                append(token)
        elif match.group(1) is not None:
            extend(_hangul_tokens(match.group(1)))
        else:
            extend(_cjk_tokens(match.group(2), query))
    return tokens


# English function words left out of queries (see the module docstring). Written as words;
# queries compare their tokens (stemmed). Words whose stem is shared with content words are not
# here ("may" the month, "own"/"owned", "like", "near"/"nearly", "past", "let", "quit").
ENGLISH_STOPWORDS = frozenset("""
a an the this that these those some any each every either neither no nor not all both few many much more
most other another such same
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves
what which who whom whose when where why how
am is are was were be been being have has had having do does did doing done
will would shall should can could might must ought
about above across after against along among around at before behind below beneath beside besides
between beyond by down during except for from in inside into of off on onto out outside over
since through throughout till to toward towards under until up upon via with within without
and but or so yet if then than because as while although though whether
also just only again further once here there now ever even still very too rather
im ive id youre youve youd youll hes shes weve were theyre theyve theyd thats whats whos wheres
theres heres hows dont doesnt didnt isnt arent wasnt werent havent hasnt hadnt cant couldnt
wouldnt shouldnt wont mustnt
""".split())  # noqa: SIM905 (a word list, kept as text to read and edit)


@lru_cache(maxsize=1)
def _stopword_tokens() -> frozenset[str]:
    return frozenset(t for w in ENGLISH_STOPWORDS for t in tokenize(w))


@dataclass(frozen=True)
class Unit:
    """One thing a query looks for: a token, or a quoted phrase (tokens next to each other)."""

    tokens: tuple[str, ...]

    @property
    def is_phrase(self) -> bool:
        return len(self.tokens) > 1

    def fts(self) -> str:
        """The unit as an FTS5 string; tokens never contain quotes or spaces."""
        return '"' + " ".join(self.tokens) + '"'


_QUOTES = re.compile(r'["\u201c\u201d]')


# Tokens a query leaves out; None means the English function words above. Set to an empty
# set to search with every word (the benchmark measures the search both ways).
QUERY_STOPWORDS: frozenset[str] | None = None


def parse_query(query: str) -> list[Unit]:
    """Units of a query, in order and without repeats: unquoted words are single tokens
    (ranked by BM25 as an OR), quoted parts are phrases. An unclosed quote runs to the end.
    Unquoted function words are left out unless the query has nothing else."""
    parts: list[tuple[tuple[str, ...], bool]] = []  # (tokens, quoted)
    for i, part in enumerate(_QUOTES.split(query)):
        if i % 2:
            parts.append((tuple(tokenize(part)), True))
        else:
            parts.extend(((token,), False) for token in tokenize(part, query=True))
    stop = _stopword_tokens() if QUERY_STOPWORDS is None else QUERY_STOPWORDS
    kept = [p for p in parts if p[0] and (p[1] or p[0][0] not in stop)]
    units: list[Unit] = []
    seen: set[tuple[str, ...]] = set()
    for tokens, _ in kept or parts:
        if tokens and tokens not in seen:
            seen.add(tokens)
            units.append(Unit(tokens))
    return units


@dataclass(frozen=True)
class Span:
    """Where a run of word characters sits in the original text, and what it produced."""

    start: int
    end: int
    tokens: tuple[str, ...]
    cjk: bool


def ascii_words(text: str) -> Iterator[re.Match[str]]:
    """The words of ASCII text (matched on its lower-case form, same offsets)."""
    return _ASCII_WORDS.finditer(text.lower())


def word_token(word: str) -> str | None:
    """The token of one lower-case ASCII word."""
    return _word_cache.get(word) or _word_token(word)


def spans(text: str) -> Iterator[Span]:
    """Runs of the original text (not the normalised one), each with its index tokens, so
    that snippets can mark the words that matched where the person wrote them."""
    if text.isascii():
        cache = _word_cache
        for match in _ASCII_WORDS.finditer(text.lower()):
            word = match.group(0)
            yield Span(match.start(), match.end(), (cache.get(word) or _word_token(word),), False)  # type: ignore[arg-type]
        return
    runs, _ = _patterns()
    for match in runs.finditer(text):
        piece = match.group(0)
        yield Span(match.start(), match.end(), tuple(tokenize(piece)), match.group(2) is not None)
