"""Benchmark `mcpmount.search.SearchIndex` beside `bm25s`, measured in the same run.

Run: ``python tests/bench/bench_search.py`` (not collected by pytest). For 1,000 and
10,000 tools it builds two corpora (the tuning corpus of ``tests/search_eval/eval_data``
and the published reference servers' corpus of ``reference_data``, each among the same
seeded distractors), and reports, per query set, recall@1/@5 and per-query latency for both
engines: the tuning set (``QUERIES``), the first held-out set (``HELDOUT``) and the
reference set (``REFERENCE_QUERIES``, never tuned on). It then times, at 10,000 tools, a
20-tool change (20 tools removed and added back changed, then the first search), and a
server's re-listing as the registry applies it (all the server's tools removed, all added
back with 20 changed, then the first search), each against a rebuild of the same index,
and prints the ratios.

With the ``semantic`` extra installed it also reports, at 10,000 tools, the semantic ranking
alone (``semantic``: the packaged int8 all-MiniLM-L6-v2, nearest tool vectors) and fused
with ours (``fused``: ``SearchIndex(semantic_model="minilm-int8")``), with the time taken
to compute the 10,000 tool vectors (``build s``) and the fused search's latency, over
repeated queries (``p50 ms``, from the query cache) and distinct ones (each query's vector
computed: ``p50 new`` wall time, ``cpu new`` this thread's CPU time).
``MCPMOUNT_BENCH_VECTORS=DIR`` keeps the tool vectors in ``DIR`` between runs (``build s``
then times a warm start), and ``--semantic`` runs only that part.

The baseline is ``bm25s`` (the ``bench`` extra) over one text per tool: name (``_``,
``-`` and ``.`` as spaces), title, description, argument names and argument descriptions,
with its English stop words and no stemmer: plain BM25 as a host would wire it. Without
``bm25s`` installed, a textbook BM25 in this file stands in, and the report says so.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import importlib.util
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for the harness

from mcpmount.search import SearchIndex
from mcpmount.semantic._hubness import Neighbourhoods
from mcpmount.tool import MountedTool
from search_eval.eval_data import QUERIES, Query, eval_corpus
from search_eval.heldout_data import HELDOUT
from search_eval.reference_data import REFERENCE_QUERIES, reference_corpus

ROUNDS = 10
"""Passes over a query set when timing latency."""

BUILD_REPEATS = 3
CHANGE_REPEATS = 20
CHANGED_TOOLS = 20


class Engine(Protocol):
    def search(self, query: str, k: int) -> list[str]: ...


def tool_text(tool: MountedTool) -> str:
    """The one text per tool a plain BM25 indexes."""
    d = tool.definition
    parts = [re.sub(r"[_.-]+", " ", tool.name), d.title or "", d.description or ""]
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
        self.index.search("warm up")  # may build lazily: count it in the build time

    def search(self, query: str, k: int) -> list[str]:
        return [hit.tool.name for hit in self.index.search(query, k).hits]


class Fused:
    """Ours with the packaged semantic model, once every tool vector is computed."""

    def __init__(self, tools: Sequence[MountedTool]) -> None:
        cache = os.environ.get("MCPMOUNT_BENCH_VECTORS")
        self.index = SearchIndex(
            semantic_model="minilm-int8", vector_cache=Path(cache) if cache else None
        )
        self.index.add(tools)
        while self.index.embed_pending():
            pass

    def search(self, query: str, k: int) -> list[str]:
        return [hit.tool.name for hit in self.index.search(query, k).hits]


class SemanticOnly:
    """The semantic half of a `Fused` index alone: the tools whose vectors are nearest."""

    def __init__(self, fused: Fused) -> None:
        self.ranker: Any = fused.index._semantic  # pyright: ignore[reportPrivateUsage]
        self.docs: Any = fused.index._postings.docs  # pyright: ignore[reportPrivateUsage]

    def search(self, query: str, k: int) -> list[str]:
        found: list[int] = self.ranker.rank(query, k) or []
        return [self.docs[i].tool.name for i in found]


def first_latencies(engine: Engine, queries: Sequence[Query]) -> tuple[float, float]:
    """p50 of each query's first search (its vector not cached yet): wall and CPU time.

    CPU time (of this thread) is what a search costs; on a shared, loaded machine the wall
    time also counts the waits for a core.
    """
    wall: list[float] = []
    cpu: list[float] = []
    for query in queries:
        start, start_cpu = time.perf_counter(), time.thread_time()
        engine.search(query.text, 5)
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return statistics.median(wall), statistics.median(cpu)


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


def latencies(engine: Engine, queries: Sequence[Query]) -> tuple[float, float]:
    samples: list[float] = []
    for _ in range(ROUNDS):
        for query in queries:
            start = time.perf_counter()
            engine.search(query.text, 5)
            samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2], samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def recall(engine: Engine, queries: Sequence[Query]) -> tuple[float, float]:
    at1 = at5 = 0
    for query in queries:
        found = engine.search(query.text, 5)
        at1 += bool(found[:1] and found[0] in query.targets)
        at5 += bool(set(found) & set(query.targets))
    return at1 / len(queries), at5 / len(queries)


def changed(tool: MountedTool) -> MountedTool:
    """``tool`` with a reworded description, as a server's list change would bring it."""
    description = (tool.definition.description or "") + " Changed in the new release."
    definition = tool.definition.model_copy(update={"description": description})
    return dataclasses.replace(tool, definition=definition)


def change_cost(tools: list[MountedTool]) -> tuple[float, float, float]:
    """Median seconds to rebuild the index, to apply a 20-tool change and search, and to
    re-list a whole server with 20 of its tools changed (all out, all in) and search."""
    index = SearchIndex()
    index.add(tools)
    index.search("warm up")
    _, rebuild = timed_build(Ours, tools)
    stride = len(tools) // CHANGED_TOOLS
    picked = tools[::stride][:CHANGED_TOOLS]
    servers = statistics.multimode(t.server for t in tools)
    server = [t for t in tools if t.server == servers[0]]
    costs: list[float] = []
    for scattered, whole in ((picked, picked), (server[:CHANGED_TOOLS], server)):
        times: list[float] = []
        for round_ in range(CHANGE_REPEATS):
            batch = [changed(t) for t in scattered] if round_ % 2 == 0 else scattered
            listing = batch + whole[len(batch) :] if whole is server else batch
            gc.collect()
            start = time.perf_counter()
            index.remove(t.name for t in whole)
            index.add(listing)
            index.search("list files")
            times.append(time.perf_counter() - start)
        costs.append(statistics.median(times))
    return rebuild, costs[0], costs[1]


SETS: tuple[tuple[str, Callable[[int], list[MountedTool]], tuple[Query, ...]], ...] = (
    ("tuning", eval_corpus, QUERIES),
    ("heldout", eval_corpus, HELDOUT),
    ("reference", reference_corpus, REFERENCE_QUERIES),
)


def semantic_report() -> None:
    """Lexical, semantic and fused recall at 10,000 tools on every set, and fused latency."""
    if importlib.util.find_spec("onnxruntime") is None:
        print('semantic: not measured (pip install "mcpmount[semantic]")')
        return
    print("\n10,000 tools, semantic extra (int8 all-MiniLM-L6-v2, ONNX Runtime, 1 thread)")
    print(
        f"{'set':<10} {'n':>4} {'engine':<9} {'build s':>8} {'p50 ms':>8} {'p50 new':>8}"
        f" {'cpu new':>8} {'R@1':>6} {'R@5':>6}"
    )
    built: dict[str, tuple[Ours, Fused, float]] = {}
    for set_name, corpus, queries in SETS:
        if corpus.__name__ not in built:
            tools = corpus(10_000)
            start = time.perf_counter()
            fused = Fused(tools)
            built[corpus.__name__] = (Ours(tools), fused, time.perf_counter() - start)
        ours, fused, build = built[corpus.__name__]
        fresh, fresh_cpu = first_latencies(fused, queries)
        engines: tuple[tuple[str, Engine], ...] = (
            ("lexical", ours),
            ("semantic", SemanticOnly(fused)),
            ("fused", fused),
        )
        for name, engine in engines:
            p50, _ = latencies(engine, queries)
            at1, at5 = recall(engine, queries)
            print(
                f"{set_name:<10} {len(queries):>4} {name:<9}"
                f" {(build if name == 'fused' else 0.0):>8.1f} {p50 * 1e3:>8.3f}"
                f" {(fresh * 1e3 if name == 'fused' else 0.0):>8.3f}"
                f" {(fresh_cpu * 1e3 if name == 'fused' else 0.0):>8.3f} {at1:>6.3f} {at5:>6.3f}"
            )
    full, change = crowding_cost(built["eval_corpus"][1])
    print(
        f"crowding of 10,000 tool vectors: computed whole {full * 1e3:.0f} ms CPU, after a"
        f" {CHANGED_TOOLS}-tool change {change * 1e3:.1f} ms CPU ({full / change:.0f}x less)"
    )


def crowding_cost(fused: Fused) -> tuple[float, float]:
    """CPU seconds of this thread to compute the crowding of the index's tool vectors from
    nothing, and the median to bring it up to date after 20 texts left and 20 came."""
    ranker: Any = fused.index._semantic  # pyright: ignore[reportPrivateUsage]
    vectors: dict[int, Any] = {key: ranker._vectors[key] for key in ranker._keys}
    hubs = Neighbourhoods()
    start = time.thread_time()
    hubs.update(vectors)
    full = time.thread_time() - start
    keys = list(vectors)
    stride = len(keys) // CHANGED_TOOLS
    times: list[float] = []
    for round_ in range(CHANGE_REPEATS):
        changed = dict(vectors)
        for at in keys[round_ % stride :: stride][:CHANGED_TOOLS]:
            del changed[at]
            changed[at ^ (round_ + 1)] = vectors[at][::-1].copy()  # another text
        start = time.thread_time()
        hubs.update(changed)
        times.append(time.thread_time() - start)
        hubs.update(vectors)
    return full, statistics.median(times)


def main() -> None:
    try:
        importlib.import_module("bm25s")

        baseline: Callable[[Sequence[MountedTool]], Engine] = Bm25s
        baseline_name = "bm25s"
    except ImportError:
        baseline = TextbookBm25
        baseline_name = "textbook BM25 (bm25s not installed)"
    print(f"baseline: {baseline_name}; latency over {ROUNDS} rounds of each set, k=5")
    print(
        f"{'tools':>6} {'set':<10} {'n':>4} {'engine':<8} {'build s':>8} {'p50 ms':>8}"
        f" {'p99 ms':>8} {'R@1':>6} {'R@5':>6}"
    )
    for size in (1_000, 10_000):
        engines: dict[tuple[str, str], tuple[Engine, float]] = {}
        for set_name, corpus, queries in SETS:
            for name, factory in (("ours", Ours), ("baseline", baseline)):
                key = (corpus.__name__, name)
                if key not in engines:
                    engines[key] = timed_build(factory, corpus(size))
                engine, build = engines[key]
                p50, p99 = latencies(engine, queries)
                at1, at5 = recall(engine, queries)
                print(
                    f"{size:>6} {set_name:<10} {len(queries):>4} {name:<8} {build:>8.3f}"
                    f" {p50 * 1e3:>8.3f} {p99 * 1e3:>8.3f} {at1:>6.3f} {at5:>6.3f}"
                )
    rebuild, change, relist = change_cost(eval_corpus(10_000))
    print(
        f"10,000 tools: rebuild {rebuild * 1e3:.1f} ms; a {CHANGED_TOOLS}-tool change then"
        f" a search {change * 1e3:.2f} ms; rebuild / change = {rebuild / change:.1f}x;\n"
        f"  a server's whole list out and in, {CHANGED_TOOLS} tools changed, then a search"
        f" {relist * 1e3:.2f} ms; rebuild / that = {rebuild / relist:.1f}x"
    )
    semantic_report()


if __name__ == "__main__":
    if sys.argv[1:] == ["--semantic"]:
        semantic_report()
    else:
        main()
