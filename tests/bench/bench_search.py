"""Benchmark `mcpmount.search.SearchIndex` beside `bm25s`, measured in the same run.

Run: ``python tests/bench/bench_search.py`` (not collected by pytest). It builds corpora of
1,000 and 10,000 tools (the real servers' tools of ``tests/search_eval`` mixed into the
same seeded distractors), times index builds and per-query latency over the labelled
queries, and reports recall@1/@5 on the evaluation set for both.

The baseline is ``bm25s`` (a benchmark-only dependency: ``pip install bm25s``) over one
text per tool: name (``_`` and ``.`` as spaces), title, description, argument names and
argument descriptions, with its English stop words and no stemmer: plain BM25 as a host
would wire it. Without ``bm25s`` installed, a textbook BM25 in this file stands in, and
the report says so.
"""

from __future__ import annotations

import gc
import importlib
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.search_eval.eval_data import QUERIES, eval_corpus

from mcpmount.search import SearchIndex
from mcpmount.tool import MountedTool

ROUNDS = 20
"""Passes over the query set when timing latency."""

BUILD_REPEATS = 5


class Engine(Protocol):
    def search(self, query: str, k: int) -> list[str]: ...


def tool_text(tool: MountedTool) -> str:
    """The one text per tool a plain BM25 indexes."""
    d = tool.definition
    parts = [re.sub(r"[_.]+", " ", tool.name), d.title or "", d.description or ""]
    props: dict[str, Any] = d.input_schema.get("properties") or {}
    for key, value in props.items():
        parts.append(key.replace("_", " "))
        if isinstance(value, dict):
            description: object = value.get("description")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(description, str):
                parts.append(description)
    return " ".join(parts)


class Ours:
    def __init__(self, tools: Sequence[MountedTool]) -> None:
        self.index = SearchIndex()
        self.index.add(tools)
        self.index.search("warm up")  # builds lazily: count it in the build time

    def search(self, query: str, k: int) -> list[str]:
        return [hit.tool.name for hit in self.index.search(query, k).hits]


class Bm25s:
    def __init__(self, tools: Sequence[MountedTool]) -> None:
        # Imported by name: bm25s is a benchmark-only baseline, absent from CI's environment.
        self.bm25s: Any = importlib.import_module("bm25s")
        self.names = [t.name for t in tools]
        corpus = self.bm25s.tokenize([tool_text(t) for t in tools], show_progress=False)
        self.retriever: Any = self.bm25s.BM25()
        self.retriever.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        tokens = self.bm25s.tokenize([query], return_ids=False, show_progress=False)
        if not tokens[0]:
            return []
        try:
            ids, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        except ValueError:  # every query word is unknown to the corpus
            return []
        return [self.names[int(i)] for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


class TextbookBm25:
    """BM25 (k1 1.5, b 0.75) over whitespace-and-punctuation tokens; the fallback baseline."""

    def __init__(self, tools: Sequence[MountedTool]) -> None:
        self.names = [t.name for t in tools]
        self.postings: dict[str, dict[int, float]] = {}
        docs = [re.findall(r"\w\w+", tool_text(t).lower()) for t in tools]
        avg = sum(len(d) for d in docs) / max(len(docs), 1)
        tfs: dict[str, dict[int, int]] = {}
        for i, doc in enumerate(docs):
            for term in doc:
                row = tfs.setdefault(term, {})
                row[i] = row.get(i, 0) + 1
        n = len(docs)
        for term, row in tfs.items():
            idf = math.log(1 + (n - len(row) + 0.5) / (len(row) + 0.5))
            self.postings[term] = {
                i: idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * len(docs[i]) / avg))
                for i, tf in row.items()
            }

    def search(self, query: str, k: int) -> list[str]:
        scores: dict[int, float] = {}
        for term in set(re.findall(r"\w\w+", query.lower())):
            for i, s in self.postings.get(term, {}).items():
                scores[i] = scores.get(i, 0.0) + s
        best = sorted(scores.items(), key=lambda item: (-item[1], self.names[item[0]]))[:k]
        return [self.names[i] for i, _ in best]


def timed_build(factory: Callable[[Sequence[MountedTool]], Engine], tools: list[MountedTool]):
    times: list[float] = []
    engine: Engine | None = None
    for _ in range(BUILD_REPEATS):
        gc.collect()
        start = time.perf_counter()
        engine = factory(tools)
        times.append(time.perf_counter() - start)
    assert engine is not None
    return engine, statistics.median(times)


def latencies(engine: Engine) -> tuple[float, float]:
    samples: list[float] = []
    for _ in range(ROUNDS):
        for query in QUERIES:
            start = time.perf_counter()
            engine.search(query.text, 5)
            samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2], samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def recall(engine: Engine) -> tuple[float, float]:
    at1 = at5 = 0
    for query in QUERIES:
        found = engine.search(query.text, 5)
        at1 += bool(found[:1] and found[0] in query.targets)
        at5 += bool(set(found) & set(query.targets))
    return at1 / len(QUERIES), at5 / len(QUERIES)


def main() -> None:
    try:
        importlib.import_module("bm25s")

        baseline: Callable[[Sequence[MountedTool]], Engine] = Bm25s
        baseline_name = "bm25s"
    except ImportError:
        baseline = TextbookBm25
        baseline_name = "textbook BM25 (bm25s not installed)"
    print(f"baseline: {baseline_name}; {len(QUERIES)} queries x {ROUNDS} rounds, k=5")
    header = f"{'tools':>6} {'engine':<8} {'build s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    print(header + f" {'R@1':>6} {'R@5':>6}")
    for size in (1_000, 10_000):
        tools = eval_corpus(size)
        rows: dict[str, tuple[float, float, float, float, float]] = {}
        for name, factory in (("ours", Ours), ("baseline", baseline)):
            engine, build = timed_build(factory, tools)
            p50, p99 = latencies(engine)
            at1, at5 = recall(engine)
            rows[name] = (build, p50 * 1e3, p99 * 1e3, at1, at5)
            print(
                f"{size:>6} {name:<8} {build:>8.3f} {p50 * 1e3:>8.3f} {p99 * 1e3:>8.3f}"
                f" {at1:>6.3f} {at5:>6.3f}"
            )
        ours, base = rows["ours"], rows["baseline"]
        print(
            f"{size:>6} {'ratio':<8} {ours[0] / base[0]:>8.2f} {ours[1] / base[1]:>8.2f}"
            f" {ours[2] / base[2]:>8.2f}   (ours / baseline; < 1 is faster)"
        )


if __name__ == "__main__":
    main()
