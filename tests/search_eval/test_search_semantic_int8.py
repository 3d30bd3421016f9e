"""The packaged model's int8 graph and the int8 scan of tool vectors, on the real model.

The int8 graph (`mcpmount.semantic._int8_graph`, by ONNX Runtime's quantizer) is built once
per cache directory and reused, rebuilt when its file is damaged, and gives vectors close to
the shipped graph's; building it leaves the process's logging alone; without onnx the
shipped graph runs. The int8 scan (`mcpmount.semantic._int8_scores`) ranks
the nearest tools as the float32 vectors do. Needs the ``semantic`` extra (the ``dev``
extra installs it).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mcpmount.search import SearchIndex
from mcpmount.semantic import PACKAGED_MODEL, PACKAGED_SHA256, Embedder, resolve, semantic_text
from mcpmount.semantic._int8_scores import CANDIDATES, MIN_ROWS, Scorer
from search_eval.eval_data import QUERIES, REAL_TOOLS, eval_corpus

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),  # a build of the int8 graph: seconds of CPU, more if loaded
]

TEXTS = sorted({semantic_text(tool) for tool in REAL_TOOLS})
"""The real servers' tool texts, 90 of them."""


def loaded(cache: Path | None) -> Embedder:
    """The embedder a new index over a few real tools loads, its vectors computed."""
    index = SearchIndex(semantic_model=PACKAGED_MODEL, vector_cache=cache)
    index.add(REAL_TOOLS[:3])
    while index.embed_pending():
        pass
    embedder = index._semantic._embedder  # pyright: ignore[reportPrivateUsage,reportOptionalMemberAccess]
    assert embedder is not None
    return embedder


def kept_graph(cache: Path) -> Path:
    (graph,) = (cache / "models").glob("*.onnx")
    return graph


@pytest.fixture(scope="module", name="kept")
def _kept(tmp_path_factory: pytest.TempPathFactory, int8_graph: Callable[[Path], Path]) -> Path:
    """A cache directory whose ``models/`` holds the int8 graph the session built (a build is
    seconds of CPU: the tests that need one built start from a copy)."""
    return int8_graph(tmp_path_factory.mktemp("kept"))


def seeded(cache: Path, kept: Path) -> None:
    shutil.copytree(kept / "models", cache / "models")


def test_the_int8_graph_is_built_once_and_reused_from_the_cache_dir(tmp_path: Path) -> None:
    """The first index builds and keeps the graph; a second one reads it, untouched. The
    vectors are kept under the int8 graph's digest, not the shipped file's."""
    first = loaded(tmp_path)
    assert first.graph == "built"
    graph = kept_graph(tmp_path)
    assert first.sha256 == hashlib.sha256(graph.read_bytes()).hexdigest() != PACKAGED_SHA256
    assert graph.with_suffix(".sha256").read_text().strip() == first.sha256
    assert PACKAGED_SHA256[:16] in graph.name
    stat = graph.stat()
    assert (tmp_path / f"{first.sha256[:16]}-384.vectors").is_file()

    second = loaded(tmp_path)
    assert second.graph == "cached"
    assert second.sha256 == first.sha256
    assert (graph.stat().st_ino, graph.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [
        graph.name,
        graph.with_suffix(".sha256").name,
    ]  # no temporary file left behind


@pytest.mark.parametrize("damage", ["truncated", "one byte changed", "digest file missing"])
def test_a_damaged_cached_graph_is_rebuilt_with_a_warning(
    tmp_path: Path, kept: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    seeded(tmp_path, kept)
    first = loaded(tmp_path)
    assert first.graph == "cached"
    graph = kept_graph(tmp_path)
    data = graph.read_bytes()
    if damage == "truncated":
        graph.write_bytes(data[: len(data) // 2])
    elif damage == "one byte changed":
        graph.write_bytes(data[:1000] + bytes([data[1000] ^ 1]) + data[1001:])
    else:
        graph.with_suffix(".sha256").unlink()
    with caplog.at_level(logging.WARNING, logger="mcpmount.semantic"):
        again = loaded(tmp_path)
    assert "rebuilding it" in caplog.text
    assert again.graph == "built"
    assert again.sha256 == first.sha256
    assert graph.read_bytes() == data


def test_a_cache_dir_that_cannot_be_written_still_runs_the_int8_graph(
    tmp_path: Path, kept: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "models").write_text("a file where the directory would go")
    with caplog.at_level(logging.WARNING, logger="mcpmount.semantic"):
        embedder = loaded(tmp_path)
    assert "cannot keep the int8 graph" in caplog.text
    assert embedder.graph == "built"
    assert embedder.sha256 == loaded(kept).sha256  # built by another load: the same bytes


def test_int8_vectors_are_close_to_the_shipped_graphs(kept: Path) -> None:
    """Over the real tool texts, and the queries: cosine 0.98 on average, 0.95 at worst;
    each text's int8 vector is nearest its own shipped vector."""
    int8 = Embedder(*resolve(PACKAGED_MODEL), cache_dir=kept)
    shipped = Embedder(*resolve(PACKAGED_MODEL), int8=False)
    assert (int8.graph, shipped.graph) == ("cached", "shipped")
    assert shipped.sha256 == PACKAGED_SHA256
    for texts in (TEXTS, [query.text for query in QUERIES[:40]]):
        a, b = int8.embed(texts), shipped.embed(texts)
        cosines = np.einsum("ij,ij->i", a, b)
        assert cosines.mean() > 0.98, cosines
        assert cosines.min() > 0.95, cosines
        assert (np.argmax(a @ b.T, axis=1) == np.arange(len(texts))).all()
        assert np.allclose(int8.embed_query(texts[0]), a[0], atol=1e-5)


def test_without_onnx_the_shipped_graph_runs_with_one_warning(tmp_path: Path) -> None:
    """In a process where onnx cannot be imported, the model loads as shipped."""
    script = textwrap.dedent(
        f"""
        import logging, sys
        sys.modules["onnx"] = None  # import onnx now raises ImportError
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
        from pathlib import Path
        from mcpmount.semantic import PACKAGED_MODEL, PACKAGED_SHA256, Embedder, resolve
        embedder = Embedder(*resolve(PACKAGED_MODEL), cache_dir=Path({str(tmp_path)!r}))
        print(embedder.graph, embedder.sha256 == PACKAGED_SHA256, embedder.embed(["a"]).shape)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["shipped", "True", "(1,", "384)"]
    assert done.stderr.count("WARNING") == 1, done.stderr
    assert "runs as shipped" in done.stderr
    assert "needs the onnx package" in done.stderr
    assert not (tmp_path / "models").exists()


def test_building_the_int8_graph_leaves_the_root_logger_alone(tmp_path: Path) -> None:
    """ONNX Runtime's quantizer logs through the root logger, which gives a process that never
    configured logging a stderr handler: after the build it has none, and printed nothing."""
    script = textwrap.dedent(
        f"""
        import logging
        from pathlib import Path
        from mcpmount.semantic import PACKAGED_MODEL, Embedder, resolve
        embedder = Embedder(*resolve(PACKAGED_MODEL), cache_dir=Path({str(tmp_path)!r}))
        print(embedder.graph, logging.getLogger().handlers)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["built", "[]"]
    assert done.stderr == ""


def test_the_int8_scan_ranks_the_nearest_tools_as_float32_does(kept: Path) -> None:
    """Real tool vectors, among near copies of themselves (each nudged by noise) up to
    4,096 rows: for every tuning query the nearest ten, their order and their cosines are
    those of the float32 scan, and the best 99 scores are float32 cosines."""
    embedder = Embedder(*resolve(PACKAGED_MODEL), cache_dir=kept)
    real = embedder.embed(TEXTS)
    rng = np.random.default_rng(7)
    copies = real[rng.integers(0, len(real), 4096 - len(real))]
    copies = copies + rng.normal(0, 0.03, copies.shape).astype(np.float32)
    matrix = np.ascontiguousarray(np.vstack([real, copies]), np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    assert len(matrix) >= MIN_ROWS
    crowding = rng.uniform(0.2, 0.9, len(matrix)).astype(np.float32)
    for scorer, factor, penalty in (
        (Scorer(matrix), 1.0, 0.0),
        (Scorer(matrix, crowding), 2.0, crowding),
    ):
        assert scorer.int8
        ranks_as_float32(scorer, matrix, embedder, factor, penalty)


def ranks_as_float32(
    scorer: Scorer, matrix: np.ndarray, embedder: Embedder, factor: float, penalty: object
) -> None:
    for query in QUERIES:
        vector = embedder.embed_query(query.text)
        exact = factor * np.einsum("ij,j->i", matrix, vector) - penalty
        found = scorer.scores(vector)
        best = np.argsort(-exact, kind="stable")[:10]
        assert (np.argsort(-found, kind="stable")[:10] == best).all(), query.text
        assert np.allclose(found[best], exact[best], atol=1e-6)
        nearest = np.argsort(-found, kind="stable")[: CANDIDATES - 1]  # the last may tie the cap
        assert np.allclose(found[nearest], exact[nearest], atol=1e-6)  # recomputed in float32
        assert np.abs(found - exact).max() < 0.05 * factor  # capped ones sit just below


@pytest.mark.timeout(300)  # 2,100 tool vectors: about 10 s, longer on a loaded box
def test_an_index_past_min_rows_ranks_by_the_int8_scan_as_by_float32(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """In a real index over 2,100 tools, the semantic ranking of every tuning query is the
    one of the float32 vectors (by ``2 cos - crowding``), while the int8 scan runs."""
    index = SearchIndex(semantic_model=PACKAGED_MODEL, vector_cache=int8_graph(tmp_path))
    index.add(eval_corpus(MIN_ROWS + 52))
    while index.embed_pending():
        pass
    ranker = index._semantic  # pyright: ignore[reportPrivateUsage]
    assert ranker is not None
    for query in QUERIES:
        nearest = ranker.rank(query.text, 10)
        scan = ranker._scan  # pyright: ignore[reportPrivateUsage]
        embedder = ranker._embedder  # pyright: ignore[reportPrivateUsage]
        assert nearest is not None
        assert scan is not None
        assert embedder is not None
        assert scan.scorer.int8
        penalty = scan.scorer.crowding
        assert penalty is not None
        vector = embedder.embed_query(query.text)
        exact = 2 * np.einsum("ij,j->i", scan.scorer.matrix, vector) - penalty
        docs = ranker._docs  # pyright: ignore[reportPrivateUsage]
        row_of = {key: row for row, key in enumerate(scan.keys)}
        ids = sorted(docs)
        best = sorted(ids, key=lambda i: (-float(exact[row_of[docs[i]]]), i))[:10]
        assert nearest == best, query.text
