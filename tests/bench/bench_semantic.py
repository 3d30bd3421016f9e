"""Benchmark the semantic model's tokenizer and int8 graph: ours against the libraries'.

Run: ``python tests/bench/bench_semantic.py [--tools N] [--rounds R] [--ours REV]`` (not
collected by pytest; needs the ``semantic`` extra and a git checkout). "Ours" are the
hand-written WordPiece tokenizer (``_wordpiece.py``) and int8 rewrite of the ONNX graph
(``_int8_graph.py``'s ``rewrite``) that ``mcpmount.semantic`` used before it moved onto
Hugging Face ``tokenizers`` and ONNX Runtime's ``quantize_dynamic``; they are read from git
revision ``REV`` (by default the parent of the commit that removed ``_wordpiece.py``), so
both sides are measured in one run, on one machine, in one process. Printed ratios are
library / ours: below 1 the library is faster (or lower).

Reported:

- **tokenizer**: whether both give the same ids for every tool text of the corpus and every
  query of ``tests/search_eval``, and the CPU time per tool text (ours with its word cache
  cold, as in a registry's first vectors) and per query (its cache warm);
- **int8 graph**: the time to build it from the shipped ``model.onnx``; the CPU time per
  query vector (distinct queries, as a new search pays) and per batch of `BATCH` tool texts
  (as `SemanticRanker.work` computes them); how close its vectors are to the shipped float
  graph's (cosine, mean and worst, over the tool texts and the queries);
- **recall**: recall@1 and @5 of the fused index (``SearchIndex(semantic_model=...)``) at
  ``N`` tools on the tuning, held-out and reference sets of ``tests/search_eval``, ours (its
  tokenizer and graph) against the libraries'.

Timings interleave the two sides round by round and take the median of ``R`` rounds (one
for the builds), in CPU time of the process, so that the other work of a shared machine
weighs on neither side.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # for the harness

import numpy as np  # noqa: E402

from mcpmount.search import SearchIndex  # noqa: E402
from mcpmount.semantic import PACKAGED_MODEL, Embedder, resolve, semantic_text  # noqa: E402
from mcpmount.semantic._embedding import open_session  # noqa: E402
from mcpmount.semantic._int8_graph import quantize  # noqa: E402
from mcpmount.semantic._ranker import BATCH  # noqa: E402
from mcpmount.semantic._tokenizer import load_tokenizer  # noqa: E402
from mcpmount.tool import MountedTool  # noqa: E402
from search_eval.eval_data import QUERIES, Query, eval_corpus, recall  # noqa: E402
from search_eval.heldout_data import HELDOUT  # noqa: E402
from search_eval.reference_data import REFERENCE_QUERIES, reference_corpus  # noqa: E402

REMOVED = "src/mcpmount/semantic/_wordpiece.py"
"""A file of ours that the switch to the libraries removed: its deletion names the switch."""


def ours_revision() -> str:
    """The parent of the commit that removed ours, or HEAD while they are not removed."""
    removed = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--diff-filter=D", "--", REMOVED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return f"{removed}^" if removed else "HEAD"


def load_ours(revision: str, name: str) -> Any:
    """Module ``mcpmount/semantic/{name}.py`` as of ``revision``, loaded beside today's."""
    source = subprocess.run(
        ["git", "show", f"{revision}:src/mcpmount/semantic/{name}.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType(f"bench_ours{name}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:{name}.py", "exec"), module.__dict__)
    return module


class _Ids:
    __slots__ = ("ids",)

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


class OursTokenizer:
    """Our WordPiece behind the interface of a ``tokenizers`` tokenizer."""

    def __init__(self, wordpiece: Any) -> None:
        self.wordpiece = wordpiece

    def encode(self, sequence: str) -> _Ids:
        return _Ids(self.wordpiece.encode(sequence))


def embedder(graph: bytes, tokenizer: Any) -> Embedder:
    """An `Embedder` of the packaged model that runs ``graph`` with ``tokenizer``."""
    made = Embedder(*resolve(PACKAGED_MODEL), int8=False)  # loads fast: nothing built
    ort: Any = importlib.import_module("onnxruntime")
    made._session = open_session(ort, graph)  # pyright: ignore[reportPrivateUsage]
    made.graph = "built"  # one text a run, as an int8 graph needs
    made.tokenizer = tokenizer
    return made


def cpu(work: Callable[[], object]) -> float:
    """CPU seconds of the process (every thread: the quantizer's session has a pool)."""
    start = time.process_time()
    work()
    return time.process_time() - start


def interleaved(sides: Sequence[Callable[[], object]], rounds: int) -> list[float]:
    """Median CPU seconds of each side, the sides alternating round by round."""
    samples: list[list[float]] = [[] for _ in sides]
    for _ in range(rounds):
        for at, side in enumerate(sides):
            samples[at].append(cpu(side))
    return [statistics.median(s) for s in samples]


def row(label: str, ours: float, library: float, unit: str, scale: float = 1.0) -> None:
    ratio = library / ours if ours else float("nan")
    print(f"  {label:<34} {ours * scale:>10.3f} {library * scale:>10.3f} {unit:<4} {ratio:>6.2f}")


def header(title: str) -> None:
    print(f"\n{title}\n  {'':<34} {'ours':>10} {'library':>10} {'':<4} {'ratio':>6}")


def tokenizer_report(wordpiece: Any, texts: list[str], queries: list[str], rounds: int) -> None:
    library = load_tokenizer()
    ours = wordpiece()
    differ = [t for t in texts + queries if library.encode(t).ids != ours.encode(t)]
    print(f"\ntokenizer: {len(texts)} tool texts and {len(queries)} queries, ", end="")
    print(f"{len(differ)} encoded differently" + (f", e.g. {differ[0]!r}" if differ else ""))
    header("tokenizer (CPU per text)")
    fresh = [wordpiece() for _ in range(rounds)]  # loaded beforehand: its load is not timed

    def ours_cold() -> None:
        tokenizer = fresh.pop()
        for text in texts:
            tokenizer.encode(text)

    cold = interleaved([ours_cold, lambda: [library.encode(t) for t in texts]], rounds)
    warm = interleaved(
        [lambda: [ours.encode(q) for q in queries], lambda: [library.encode(q) for q in queries]],
        rounds,
    )
    row("tool text (ours: word cache cold)", cold[0] / len(texts), cold[1] / len(texts), "us", 1e6)
    row("query (ours: word cache warm)", warm[0] / len(queries), warm[1] / len(queries), "us", 1e6)


def graph_report(
    rewrite: Callable[[bytes], bytes],
    sides: tuple[Embedder, Embedder],
    texts: list[str],
    queries: list[str],
    rounds: int,
) -> None:
    header("int8 graph (CPU)")
    shipped = resolve(PACKAGED_MODEL)[0].read_bytes()
    builds = interleaved([lambda: rewrite(shipped), lambda: quantize(shipped)], 1)
    row("build from model.onnx", builds[0], builds[1], "s")

    def queries_of(side: Embedder) -> Callable[[], object]:
        def run() -> None:
            side._queries.clear()  # pyright: ignore[reportPrivateUsage]  # each vector computed
            for query in queries:
                side.embed_query(query)

        return run

    per_query = interleaved([queries_of(side) for side in sides], rounds)
    row("query vector", per_query[0] / len(queries), per_query[1] / len(queries), "ms", 1e3)
    batches = [texts[at : at + BATCH] for at in range(0, len(texts), BATCH)][:4]

    def batches_of(side: Embedder) -> Callable[[], object]:
        return lambda: [side.embed(batch) for batch in batches]

    per_batch = interleaved([batches_of(side) for side in sides], rounds)
    n = len(batches)
    row(f"batch of {BATCH} tool texts", per_batch[0] / n, per_batch[1] / n, "ms", 1e3)

    float32 = Embedder(*resolve(PACKAGED_MODEL), int8=False)
    for name, sample in (("tool texts", texts[:256]), ("queries", queries)):
        reference = float32.embed(sample)
        cosines = [np.einsum("ij,ij->i", side.embed(sample), reference) for side in sides]
        means = [float(c.mean()) for c in cosines]
        worst = [float(c.min()) for c in cosines]
        row(f"cosine to float32, {name}, mean", means[0], means[1], "")
        row(f"cosine to float32, {name}, worst", worst[0], worst[1], "")
        apart = float(np.abs(sides[0].embed(sample) - sides[1].embed(sample)).max())
        print(f"  {name}: the two sides' vectors differ by at most {apart:.2g} a component")


def fused(tools: list[MountedTool], side: Embedder) -> SearchIndex:
    index = SearchIndex(semantic_model=PACKAGED_MODEL)
    ranker: Any = index._semantic  # pyright: ignore[reportPrivateUsage]
    ranker._embedder = side  # loaded already: no other model, no store
    index.add(tools)
    while index.embed_pending():
        pass
    return index


def recall_report(sides: tuple[Embedder, Embedder], tools: int) -> None:
    header(f"recall of the fused index at {tools} tools")
    sets: tuple[tuple[str, Callable[[int], list[MountedTool]], tuple[Query, ...]], ...] = (
        ("tuning", eval_corpus, QUERIES),
        ("held-out", eval_corpus, HELDOUT),
        ("reference", reference_corpus, REFERENCE_QUERIES),
    )
    for corpus in (eval_corpus, reference_corpus):
        indexes = [fused(corpus(tools), side) for side in sides]
        for name, of, queries in sets:
            if of is corpus:
                for k in (1, 5):
                    found = [recall(index, queries, k)[0] for index in indexes]
                    row(f"{name} recall@{k}", found[0], found[1], "")


def main() -> None:
    parser = argparse.ArgumentParser(description="ours against the libraries, in one run")
    parser.add_argument("--tools", type=int, default=1000, help="tools in the recall corpora")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds per side")
    parser.add_argument("--ours", default=None, help="git revision to read ours from")
    args = parser.parse_args()
    revision = args.ours or ours_revision()
    wordpiece: Any = load_ours(revision, "_wordpiece").WordPiece
    rewrite: Any = load_ours(revision, "_int8_graph").rewrite
    print(f"ours: {revision} (git), library: tokenizers and onnxruntime.quantization")
    queries = [q.text for q in (*QUERIES, *HELDOUT, *REFERENCE_QUERIES)]
    texts = [semantic_text(tool) for tool in eval_corpus(2000)]
    tokenizer_report(wordpiece, texts, queries, args.rounds)

    source = resolve(PACKAGED_MODEL)[0]
    ours = embedder(rewrite(source.read_bytes()), OursTokenizer(wordpiece()))
    library = embedder(quantize(source.read_bytes()), load_tokenizer())
    graph_report(rewrite, (ours, library), texts, queries, args.rounds)
    recall_report((ours, library), args.tools)


if __name__ == "__main__":
    main()
