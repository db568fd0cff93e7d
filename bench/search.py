"""Benchmark of transcript search: `python bench/search.py` from the project root.

For each size (default 100,000 and 1,000,000 messages) it generates synthetic transcripts
(fixed seed: English-like text drawn from a 20,000-word vocabulary with a Zipf
distribution, function words at the top ranks as in real text; about 6% Korean messages
(3,000 nouns with particles), 3% Japanese and 2% Chinese, each from its own Zipf
vocabulary), writes them as JSON Lines logs, and measures in this process:

  build        rebuilding the index from the logs in one transaction (messages/s)
  incremental  TranscriptStore.append (log row + index row, fsync off and on) (messages/s)
  query        TranscriptStore.search(k=10) latency, p50 / p99, for queries made the way
               people search a transcript: 2-3 content words of a random message, a third
               of them with a function word in front ("what about ..."), single words, and
               Korean, Japanese and Chinese words
  scan         the baseline: BM25 over every message per query in pure Python, over the
               same pre-tokenised rows (the index's token streams); it also checks that the
               index returned exactly the scan's top 10

Prints readable lines, then one line of JSON with the figures.

Options: --sizes 100000,1000000   --queries 300   --scan-queries 40 (at 1,000,000: a sample of 8)
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.transcript import TranscriptStore, bm25
from bot.transcript import home as homes
from bot.transcript import log as logs
from bot.transcript.model import Message, format_time, parse_time
from bot.transcript.tokenize import parse_query

SEED = 20240501
AGENT = "bench"
PER_CONVERSATION = 400
TARGET_P50_MS = 10.0
TARGET_SPEEDUP = 100.0

FUNCTION_WORDS = [
    "the", "i", "to", "you", "and", "a", "it", "is", "that", "of", "in", "we", "can", "for", "this", "be", "on",
    "with", "not", "do", "have", "what", "my", "so", "but", "are", "at", "was", "just", "if", "me", "your",
    "about", "will", "there", "they", "as", "an", "or", "from", "how", "all", "one", "would", "like", "get", "up",
    "out", "no", "when", "then", "some", "more", "also", "there's", "let's", "yes", "ok", "sure", "now", "here"
]
ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "cl",
          "dr", "fl", "gr", "pl", "pr", "sc", "sh", "sl", "st", "str", "th", "tr"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "ou"]
CODAS = ["", "n", "r", "s", "t", "l", "m", "nd", "nt", "st", "ck", "ng"]
SUFFIXES = ["", "", "", "s", "ing", "ed", "er", "ly", "tion", "ment"]
KOREAN_SYLLABLES = ("가 나 다 라 마 바 사 아 자 차 카 타 파 하 고 노 도 로 모 보 소 오 조 구 누 두 루 무 부 수 우 주 "
                    "기 니 디 리 미 비 시 이 지 회 의 원 정 전 상 장 대 한 국 문 서 경 영 관 계 발 개 통 제")
KOREAN_PARTICLES = ["", "", "를", "을", "에서", "은", "는", "이", "가", "의", "에", "로", "와", "도", "들이"]
KOREAN_ENDINGS = ["했어요", "합니다", "있어요", "봤다", "필요해요", "좋아요", "확인했다"]
KANJI = ("記 憶 会 議 予 定 資 料 顧 客 検 索 配 布 確 認 設 計 報 告 情 報 開 発 管 理 技 術 時 間 問 題 "
         "結 果 作 業 質 仕 様 品 目 的 方 法 環 境 機 能 説 明 運 用 変 更")
JA_PARTICLES = ["を", "は", "が", "に", "で", "の", "と"]
JA_ENDINGS = ["しました", "します", "でした", "ですか", "ください", "できる"]
HANZI = ("记 忆 会 议 客 户 项 目 数 据 搜 索 部 署 文 档 预 算 团 队 问 题 时 间 系 统 功 能 用 户 测 试 "
         "服 务 网 络 信 息 计 划 结 果 方 法 环 境")
ZH_FILLERS = ["我们", "今天", "需要", "已经", "关于", "的", "了", "在", "和"]


def zipf_words(rng: random.Random, alphabet: list[str], size: int, lengths: tuple[int, ...]) -> list[str]:
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        word = "".join(rng.choice(alphabet) for _ in range(rng.choice(lengths)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Zipf:
    def __init__(self, words: list[str], s: float = 1.07) -> None:
        self.words = words
        total = 0.0
        self.cumulative = []
        for rank in range(len(words)):
            total += 1.0 / (rank + 1) ** s
            self.cumulative.append(total)
        self.total = total

    def draw(self, rng: random.Random) -> str:
        return self.words[bisect.bisect(self.cumulative, rng.random() * self.total)]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    words: list[str] = list(FUNCTION_WORDS)
    seen = set(words)
    while len(words) < size:
        stem = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.choice((1, 1, 2, 2, 3))))
        word = stem + rng.choice(CODAS) + rng.choice(SUFFIXES)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Corpus:
    """Deterministic synthetic messages."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.english_words = Zipf(vocabulary(self.rng))
        self.korean_words = Zipf(zipf_words(self.rng, KOREAN_SYLLABLES.split(), 3000, (2, 2, 3, 4)))
        self.japanese_words = Zipf(zipf_words(self.rng, KANJI.split(), 1500, (2,)))
        self.chinese_words = Zipf(zipf_words(self.rng, HANZI.split(), 1000, (2,)))

    def english(self) -> str:
        n = max(2, min(300, int(self.rng.lognormvariate(2.7, 0.7))))
        words = [self.english_words.draw(self.rng) for _ in range(n)]
        words[0] = words[0].capitalize()
        return " ".join(words) + self.rng.choice((".", ".", "?", "!"))

    def korean(self) -> str:
        r = self.rng
        parts = [self.korean_words.draw(r) + r.choice(KOREAN_PARTICLES) for _ in range(r.randint(2, 7))]
        return " ".join(parts) + " " + r.choice(KOREAN_ENDINGS)

    def japanese(self) -> str:
        r = self.rng
        return "".join(self.japanese_words.draw(r) + r.choice(JA_PARTICLES) for _ in range(r.randint(2, 5))) + (
            r.choice(JA_ENDINGS) + "。")

    def chinese(self) -> str:
        r = self.rng
        parts = [self.chinese_words.draw(r) if r.random() < 0.6 else r.choice(ZH_FILLERS)
                 for _ in range(r.randint(4, 9))]
        return "".join(parts) + "。"

    def text(self) -> str:
        x = self.rng.random()
        if x < 0.06:
            return self.korean()
        if x < 0.09:
            return self.japanese()
        if x < 0.11:
            return self.chinese()
        return self.english()

    def query(self, sample: list[str]) -> str:
        r = self.rng
        x = r.random()
        if x < 0.07:
            return self.korean_words.draw(r)
        if x < 0.11:
            return self.japanese_words.draw(r)
        if x < 0.14:
            return self.chinese_words.draw(r)
        content = []
        while not content:
            words = [w.strip(".?!").lower() for w in r.choice(sample).split()]
            content = sorted({w for w in words if w not in FUNCTION_WORDS and w.isascii()})
        if x < 0.24:
            return r.choice(content)
        chosen = r.sample(content, min(len(content), r.choice((2, 2, 3))))
        if r.random() < 0.33:
            chosen.insert(0, r.choice(("what about", "the", "how is the", "did we")))
        return " ".join(chosen)


def write_logs(home: Path, corpus: Corpus, count: int) -> list[str]:
    """The logs, as TranscriptStore writes them; returns a sample of English texts for queries."""
    start = parse_time("2024-01-01T00:00:00Z").timestamp()
    folder = homes.agent_folder(home, AGENT)
    folder.mkdir(parents=True, exist_ok=True)
    sample: list[str] = []
    kinds = ("user", "assistant", "assistant", "tool_call", "tool_result", "reasoning")
    sources = {"user": "user", "assistant": "agent", "tool_call": "agent", "tool_result": "tool:shell",
               "reasoning": "agent"}
    from datetime import UTC, datetime

    for first in range(0, count, PER_CONVERSATION):
        conversation = f"conv-{first // PER_CONVERSATION:05d}"
        lines = []
        for i in range(first, min(count, first + PER_CONVERSATION)):
            kind = kinds[i % len(kinds)]
            text = corpus.text()
            if len(sample) < 5000 and text.isascii() and corpus.rng.random() < 0.05:
                sample.append(text)
            moment = datetime.fromtimestamp(start + i * 7, UTC)
            lines.append(logs.serialize(Message(
                message_id=f"m_bench{i:08d}", agent_id=AGENT, conversation_id=conversation, kind=kind,
                source=sources[kind], captured_at=format_time(moment), text=text)))
        (folder / f"{conversation}.jsonl").write_bytes(b"".join(lines))
    return sample


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Scan:
    """The baseline: every message's pre-tokenised row in memory, BM25 over all of them."""

    def __init__(self, store: TranscriptStore) -> None:
        index = store._index(AGENT)
        self.rows = [(tokens.split(), length, mid) for tokens, length, mid in
                     index.conn.execute("SELECT tokens, length, message_id FROM messages")]
        self.n = len(self.rows)
        self.avgdl = sum(r[1] for r in self.rows) / self.n
        self.df: Counter[str] = Counter()
        for tokens, _, _ in self.rows:
            self.df.update(set(tokens))

    def top(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        units = parse_query(query)
        idfs = []
        for unit in units:
            if len(unit.tokens) == 1:
                df = self.df.get(unit.tokens[0], 0)
            else:
                df = sum(1 for tokens, _, _ in self.rows if bm25.count(tokens, unit.tokens))
            idfs.append(bm25.idf(self.n, df))
        found = []
        avgdl = self.avgdl
        for tokens, length, mid in self.rows:
            total = 0.0
            hit = False
            for unit, idf in zip(units, idfs, strict=True):
                tf = bm25.count(tokens, unit.tokens)
                if tf:
                    hit = True
                    total += bm25.term_score(idf, tf, length, avgdl)
            if hit:
                found.append((mid, total))
        found.sort(key=lambda x: (-x[1], x[0]))
        return found[:k]


def run_size(count: int, queries: int, scan_queries: int, seed: int) -> dict[str, float]:
    corpus = Corpus(seed)
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-") as tmp:
        home = Path(tmp)
        t0 = time.perf_counter()
        sample = write_logs(home, corpus, count)
        print(f"[{count:,}] generated and wrote {count:,} messages in {time.perf_counter() - t0:.1f} s")

        store = TranscriptStore(home, fsync=False)
        t0 = time.perf_counter()
        store.rebuild(AGENT)
        build_s = time.perf_counter() - t0
        n, total = store._index(AGENT).stats()
        print(f"[{count:,}] index build: {build_s:.1f} s, {count / build_s:,.0f} messages/s "
              f"({total / n:.1f} tokens per message)")

        query_list = [corpus.query(sample) for _ in range(queries)]
        for q in query_list[:20]:  # warm the page cache and the tokenizer's caches
            store.search(q, agent=AGENT, k=10)
        latencies = []
        results = {}
        for q in query_list:
            t0 = time.perf_counter()
            hits = store.search(q, agent=AGENT, k=10)
            latencies.append((time.perf_counter() - t0) * 1000)
            results[q] = [(h.message_id, h.score) for h in hits]
        p50, p99 = statistics.median(latencies), percentile(latencies, 0.99)
        print(f"[{count:,}] query (k=10, {queries} queries): p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
              f"max {max(latencies):.1f} ms")

        scan = Scan(store)
        sampled = query_list[: min(scan_queries, len(query_list))]
        scan_ms = []
        agree = True
        for q in sampled:
            t0 = time.perf_counter()
            expected = scan.top(q)
            scan_ms.append((time.perf_counter() - t0) * 1000)
            got = results[q]
            if [g[0] for g in got] != [e[0] for e in expected] or any(
                    abs(g[1] - e[1]) > 1e-9 * max(1.0, abs(e[1])) for g, e in zip(got, expected, strict=False)):
                agree = False
                print(f"  MISMATCH for {q!r}: index {got[:3]} scan {expected[:3]}")
        scan_p50 = statistics.median(scan_ms)
        print(f"[{count:,}] full scan (pure Python BM25, {len(sampled)} queries): p50 {scan_p50:.0f} ms; "
              f"index {scan_p50 / p50:,.0f}x faster (p50/p50); same top 10: {agree}")
        del scan

        appended = 2000 if count >= 100_000 else 200
        t0 = time.perf_counter()
        for _i in range(appended):
            store.append(AGENT, "live", "user", corpus.text())
        inc = appended / (time.perf_counter() - t0)
        store.close()
        durable = TranscriptStore(home, fsync=True)
        t0 = time.perf_counter()
        for _i in range(200):
            durable.append(AGENT, "live-durable", "user", corpus.text())
        inc_fsync = 200 / (time.perf_counter() - t0)
        durable.close()
        print(f"[{count:,}] incremental append + index: {inc:,.0f} messages/s (fsync off), "
              f"{inc_fsync:,.0f} messages/s (fsync on)")
        return {"messages": count, "build_s": round(build_s, 2), "build_per_s": round(count / build_s),
                "query_p50_ms": round(p50, 3), "query_p99_ms": round(p99, 3), "scan_p50_ms": round(scan_p50, 1),
                "scan_queries": len(sampled), "speedup_p50": round(scan_p50 / p50, 1), "same_top10": agree,
                "append_per_s": round(inc), "append_fsync_per_s": round(inc_fsync)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="message counts, comma-separated")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--scan-queries", type=int, default=40, help="queries for the full scan (8 at >= 1M)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    figures = {}
    for size in (int(s) for s in args.sizes.split(",")):
        scan_queries = args.scan_queries if size < 1_000_000 else min(args.scan_queries, 8)
        figures[str(size)] = run_size(size, args.queries, scan_queries, args.seed)
    summary: dict[str, object] = {"bench": "search", "seed": args.seed, "sizes": figures}
    largest = figures[max(figures, key=int)]
    summary["target_p50_met"] = largest["query_p50_ms"] <= TARGET_P50_MS if int(max(figures, key=int)) >= 1_000_000 \
        else None
    if "100000" in figures:
        summary["target_speedup_met"] = figures["100000"]["speedup_p50"] >= TARGET_SPEEDUP
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
