"""Retrieval quality on LoCoMo: `python bench/locomo.py` from the project root.

Data: ../shared/bench/locomo10.json (`--data` to point elsewhere; CC BY-NC 4.0, evaluation
only: it is read from where it lies and never copied into the repository). Scoring follows
the README beside it: every dialogue turn is one transcript message, "speaker: text" plus
the image caption where there is one, captured at its session's date and time; every
question of categories 1-4 that has evidence (1,536) is a query; reported are

  turn recall@k   |evidence turns in the top k| / |evidence turns|, averaged (k = 1, 5, 10, 20)
  session hit@k   1 if a top-k turn is in a session of the evidence, averaged (k = 5, 10, 20)

overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).

Configurations, all in one run over the same questions:

  bm25 reference (README)   plain BM25 as the README defines it: lowercase [a-z0-9]+ tokens,
                            k1 1.2, b 0.75, one index per conversation, scored here with
                            bm25.term_score; its idf is ln(1 + (N - n + 0.5) / (n + 0.5)) and a
                            repeated query word counts again, which reproduces the README's
                            figures (checked in the run)
  plain bm25, fts5 idf      the same with FTS5's idf and each query word once
  + stems + stopwords       that, with the product's tokens (Porter2) and English function
                            words removed from questions and turns alike (a prototype's setup)
  product ...               TranscriptStore.search: every query word counts (as it was), or
                            with function words left out of the query (as it is now)
  + context / + dates       retrieval.search_in_context: neighbour fusion (n neighbours, weight
                            w) and the date preference (weight d), each alone and together
  final                     stopwords + context (n=1, w=0.5) + dates (d=0.5)
  sweep                     the final configuration with other n, w and d

Each LoCoMo conversation is one agent of a TranscriptStore in a temporary MEMREPO_HOME (so
one index per conversation), imported through TranscriptStore.import_lines with the
session's time as captured_at. Ranked lists are cut at 20; shorter k are their prefixes.

Prints tables, then one line of JSON with every figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.errors import MemrepoError  # noqa: E402
from bot.transcript import TranscriptStore, bm25  # noqa: E402
from bot.transcript import tokenize as tokenizer  # noqa: E402
from bot.transcript.retrieval import search_in_context  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo10.json"
SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
RECALL_KS = (1, 5, 10, 20)
HIT_KS = (5, 10, 20)
DEPTH = max(RECALL_KS)
CONVERSATION = "locomo"
# The README's figures for plain BM25, and how close the reference here must come.
REFERENCE = {"r@1": 0.244, "r@5": 0.441, "r@10": 0.519, "r@20": 0.587, "h@5": 0.814, "h@10": 0.893, "h@20": 0.951}
REFERENCE_TOLERANCE = 0.005
REFERENCE_NAME = "bm25 reference (README)"
TARGET_R10 = 0.60
FINAL_NAME = "final: stopwords + context + dates"
# The final configuration (stopwords on) around its settings: neighbours n, fusion weight w,
# date weight d.
SWEEP = ([(1, w, 0.0) for w in (0.25, 0.5, 0.75, 1.0)] + [(2, w, 0.0) for w in (0.25, 0.5)]
         + [(1, 0.5, d) for d in (0.25, 0.5, 1.0)] + [(1, w, 0.5) for w in (0.25, 0.75, 1.0)] + [(2, 0.5, 0.5)])
_EVIDENCE = re.compile(r"^D:?(\d+):(\d+)$")
_PLAIN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str  # "D3:12"
    session: int
    text: str
    at: datetime


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]

    @property
    def sessions(self) -> frozenset[int]:
        return frozenset(session_of(e) for e in self.evidence)


@dataclass(frozen=True)
class Sample:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


def parse_evidence(raw: Sequence[str]) -> frozenset[str]:
    """The README's rules: split on ';' and spaces, drop a stray colon ("D:11:26"), strip
    leading zeros ("D30:05"); a piece that names no turn ("D") is dropped."""
    found = set()
    for item in raw:
        for piece in re.split(r"[;\s]+", item):
            matched = _EVIDENCE.match(piece.strip())
            if matched:
                found.add(f"D{int(matched.group(1))}:{int(matched.group(2))}")
    return frozenset(found)


def parse_session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" (no zone given: read as UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Sample]:
    data = json.loads(path.read_bytes())
    samples = []
    for item in data:
        conversation = item["conversation"]
        turns = []
        sessions = sorted((int(key.split("_")[1]), key) for key, value in conversation.items()
                          if re.fullmatch(r"session_\d+", key) and isinstance(value, list))
        for number, key in sessions:
            at = parse_session_time(conversation[f"{key}_date_time"])
            for turn in conversation[key]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += " " + turn["blip_caption"]
                turns.append(Turn(turn["dia_id"], number, text, at))
        questions = []
        for qa in item["qa"]:
            evidence = parse_evidence(qa.get("evidence") or [])
            if qa["category"] in CATEGORIES and evidence:
                questions.append(Question(qa["question"], qa["category"], evidence))
        samples.append(Sample(item["sample_id"], tuple(turns), tuple(questions)))
    return samples


# ------------------------------------------------------------------------- scoring

def figures(ranked: Sequence[Sequence[str]], questions: Sequence[Question]) -> dict[str, dict[str, float]]:
    """Turn recall@k and session hit@k, overall ("all") and per category."""
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for top, question in zip(ranked, questions, strict=True):
        row = {}
        for k in RECALL_KS:
            row[f"r@{k}"] = len(question.evidence.intersection(top[:k])) / len(question.evidence)
        for k in HIT_KS:
            row[f"h@{k}"] = float(any(session_of(t) in question.sessions for t in top[:k]))
        rows["all"].append(row)
        rows[str(question.category)].append(row)
    out = {}
    for key in ["all", *(str(c) for c in CATEGORIES)]:
        group = rows[key]
        out[key] = {"n": len(group), **{m: round(sum(r[m] for r in group) / len(group), 4) for m in group[0]}}
    return out


# ------------------------------------------------------------- in-bench BM25 reference

def lucene_idf(n_rows: int, n_hits: int) -> float:
    """ln(1 + (N - n + 0.5) / (n + 0.5)): the idf of Lucene and of most BM25 packages, never
    negative. With it (and repeated query words counted again) the README's figures come out
    to within 0.001 (the product's idf, bm25.idf, is this one); with FTS5's idf
    (bm25.fts5_idf) they are a little lower."""
    return math.log(1.0 + (n_rows - n_hits + 0.5) / (n_hits + 0.5))


class PlainBM25:
    """BM25 over one conversation's turns, every turn scored: the README's reference (and,
    with another analyser or idf, its variants). Per-term shares come from bm25.term_score
    (k1 1.2, b 0.75); ties go to the earlier turn; turns without a query word are not ranked."""

    def __init__(self, turns: Sequence[Turn], analyse: Callable[[str], list[str]],
                 idf: Callable[[int, int], float] = lucene_idf, repeats: bool = True) -> None:
        self.turns = turns
        self.analyse = analyse
        self.idf = idf
        self.repeats = repeats
        self.postings: dict[str, dict[int, int]] = defaultdict(dict)
        self.lengths = []
        for i, turn in enumerate(turns):
            tokens = analyse(turn.text)
            self.lengths.append(len(tokens))
            for token, tf in Counter(tokens).items():
                self.postings[token][i] = tf
        self.avgdl = sum(self.lengths) / len(self.lengths)

    def rank(self, query: str, depth: int = DEPTH) -> list[str]:
        scores: dict[int, float] = defaultdict(float)
        tokens = self.analyse(query)
        for token in tokens if self.repeats else list(dict.fromkeys(tokens)):
            posting = self.postings.get(token)
            if not posting:
                continue
            idf = self.idf(len(self.turns), len(posting))
            for i, tf in posting.items():
                scores[i] += bm25.term_score(idf, tf, self.lengths[i], self.avgdl)
        best = sorted(scores, key=lambda i: (-scores[i], i))[:depth]
        return [self.turns[i].dia_id for i in best]


def plain_tokens(text: str) -> list[str]:
    return _PLAIN.findall(text.lower())


def stemmed_content_tokens(text: str) -> list[str]:
    """The product's tokens without English function words (on both sides, as the prototype)."""
    stop = tokenizer._stopword_tokens()
    return [t for t in tokenizer.tokenize(text) if t not in stop]


# ------------------------------------------------------------------ product search

def message_id(dia_id: str) -> str:
    return dia_id.replace(":", "-")


def dia_id(message: str) -> str:
    return message.replace("-", ":")


def agent_of(sample: Sample) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", sample.sample_id)


def build_store(home: Path, samples: Sequence[Sample]) -> TranscriptStore:
    """Every turn through the product's import: one agent (one index) per conversation."""
    store = TranscriptStore(home, fsync=False)
    for sample in samples:
        lines = [json.dumps({"message_id": message_id(t.dia_id), "agent_id": agent_of(sample),
                             "conversation_id": CONVERSATION, "kind": "user", "source": "user",
                             "captured_at": t.at.isoformat(), "text": t.text}).encode() for t in sample.turns]
        report = store.import_lines(lines, sample.sample_id)
        if report.imported != len(sample.turns):
            raise SystemExit(f"{sample.sample_id}: imported {report.imported} of {len(sample.turns)} turns")
    return store


@contextmanager
def query_stopwords(enabled: bool) -> Iterator[None]:
    """The query path with its function-word rule on (the product) or off (as it was)."""
    saved = tokenizer.QUERY_STOPWORDS
    tokenizer.QUERY_STOPWORDS = None if enabled else frozenset()
    try:
        yield
    finally:
        tokenizer.QUERY_STOPWORDS = saved


Searcher = Callable[[TranscriptStore, str, str], list[str]]


def plain_search(store: TranscriptStore, agent: str, query: str) -> list[str]:
    return [dia_id(h.message_id) for h in store.search(query, agent=agent, k=DEPTH)]


def context_search(neighbours: int, weight: float, date_weight: float) -> Searcher:
    def run(store: TranscriptStore, agent: str, query: str) -> list[str]:
        hits = search_in_context(store, query, agent=agent, k=DEPTH, neighbours=neighbours, weight=weight,
                                 date_weight=date_weight)
        return [dia_id(h.message_id) for h in hits]
    return run


def run_product(store: TranscriptStore, samples: Sequence[Sample], searcher: Searcher,
                stopwords: bool) -> tuple[list[list[str]], list[float]]:
    ranked: list[list[str]] = []
    latencies: list[float] = []
    with query_stopwords(stopwords):
        for sample in samples:
            agent = agent_of(sample)
            for question in sample.questions:
                started = time.perf_counter()
                try:
                    top = searcher(store, agent, question.text)
                except MemrepoError:  # a question with no words: nothing found
                    top = []
                latencies.append(time.perf_counter() - started)
                ranked.append(top)
    return ranked, latencies


# ------------------------------------------------------------------------ printing

METRICS = [f"r@{k}" for k in RECALL_KS] + [f"h@{k}" for k in HIT_KS]


def print_table(results: dict[str, dict[str, dict[str, float]]]) -> None:
    width = max(len(name) for name in results) + 2
    print(f"{'configuration':<{width}}{'questions':<18}" + "".join(f"{m:>7}" for m in METRICS))
    for name, result in results.items():
        for key in ["all", *(str(c) for c in CATEGORIES)]:
            label = "all" if key == "all" else f"{key} {CATEGORY_NAMES[int(key)]}"
            row = result[key]
            shown = name if key == "all" else ""
            label = f"{label} ({row['n']})"
            print(f"{shown:<{width}}{label:<18}" + "".join(f"{row[m]:>7.3f}" for m in METRICS))
        print()


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument("--no-sweep", action="store_true", help="skip the weight / neighbour sweep")
    args = parser.parse_args(argv)
    raw = args.data.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        print(f"warning: {args.data} has sha256 {digest}, the README's is {SHA256}", file=sys.stderr)
    samples = load(args.data)
    questions = [q for s in samples for q in s.questions]
    turns = sum(len(s.turns) for s in samples)
    sessions = sum(len({t.session for t in s.turns}) for s in samples)
    print(f"LoCoMo: {len(samples)} conversations, {sessions} sessions, {turns} turns, "
          f"{len(questions)} questions of categories 1-4 with evidence")
    started = time.perf_counter()

    results: dict[str, dict[str, dict[str, float]]] = {}
    latency: dict[str, dict[str, float]] = {}

    def reference(name: str, analyse: Callable[[str], list[str]], **options: object) -> None:
        engines = [PlainBM25(s.turns, analyse, **options) for s in samples]  # type: ignore[arg-type]
        results[name] = figures(
            [engine.rank(q.text) for engine, s in zip(engines, samples, strict=True) for q in s.questions], questions)

    reference(REFERENCE_NAME, plain_tokens)
    reference("plain bm25, fts5 idf, words once", plain_tokens, idf=bm25.fts5_idf, repeats=False)
    reference("plain bm25 + stems + stopwords both sides", stemmed_content_tokens, idf=bm25.fts5_idf, repeats=False)

    configurations: list[tuple[str, Searcher, bool]] = [
        ("product search, every word", plain_search, False),
        ("product + query stopwords", plain_search, True),
        ("product + context (n=1 w=0.5)", context_search(1, 0.5, 0.0), False),
        ("product + dates (d=0.5)", context_search(0, 0.0, 0.5), False),
        ("product + stopwords + context", context_search(1, 0.5, 0.0), True),
        ("product + stopwords + dates", context_search(0, 0.0, 0.5), True),
        (FINAL_NAME, context_search(1, 0.5, 0.5), True),
    ]
    sweep: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="memrepo-locomo-") as folder:
        home = Path(folder) / "home"
        os.environ["MEMREPO_HOME"] = str(home)
        t0 = time.perf_counter()
        store = build_store(home, samples)
        build_s = time.perf_counter() - t0
        try:
            for name, searcher, stopwords in configurations:
                ranked, times = run_product(store, samples, searcher, stopwords)
                results[name] = figures(ranked, questions)
                latency[name] = {"p50_ms": round(1000 * statistics.median(times), 3),
                                 "p99_ms": round(1000 * percentile(times, 0.99), 3)}
            if not args.no_sweep:
                for neighbours, weight, date_weight in SWEEP:
                    ranked, _ = run_product(store, samples, context_search(neighbours, weight, date_weight), True)
                    sweep[f"n={neighbours} w={weight} d={date_weight}"] = figures(ranked, questions)
        finally:
            store.close()

    print()
    print_table(results)
    final = results[FINAL_NAME]["all"]
    check = {m: round(results[REFERENCE_NAME]["all"][m] - REFERENCE[m], 4) for m in REFERENCE}
    reproduced = all(abs(d) <= REFERENCE_TOLERANCE for d in check.values())
    print("reference check (this run minus the README's figures): "
          + ", ".join(f"{m} {d:+.3f}" for m, d in check.items())
          + f" -> {'within' if reproduced else 'NOT within'} {REFERENCE_TOLERANCE}")
    if sweep:
        print("\nsweep of the final configuration (all categories):")
        print(f"{'':<20}" + "".join(f"{m:>7}" for m in METRICS))
        for name, result in sweep.items():
            print(f"{name:<20}" + "".join(f"{result['all'][m]:>7.3f}" for m in METRICS))
    print("\nlatency per question (ms, p50 / p99): "
          + "; ".join(f"{name} {v['p50_ms']:.2f} / {v['p99_ms']:.2f}" for name, v in latency.items()))
    met = final["r@10"] >= TARGET_R10
    total_s = time.perf_counter() - started
    print(f"index build: {turns} turns in {build_s:.2f} s; whole run {total_s:.1f} s")
    print(f"target turn recall@10 >= {TARGET_R10}: {final['r@10']:.3f} ({'met' if met else 'not met'})")
    print(json.dumps({
        "bench": "locomo", "conversations": len(samples), "turns": turns, "questions": len(questions),
        "results": results, "sweep": sweep, "latency": latency, "reference_delta": check,
        "reference_reproduced": reproduced, "target_r10": TARGET_R10, "target_met": met,
        "build_s": round(build_s, 2), "run_s": round(total_s, 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
