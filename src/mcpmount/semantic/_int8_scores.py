"""The scores of a query against every indexed tool's vector, from an int8 copy of the vectors.

A score is the cosine, or, given each tool's crowding ``r(t)`` (`mcpmount.semantic._hubness`),
``2 cos(q, t) - r(t)``: the best are chosen by the corrected score, not the cosine alone.

At 10,000 tools the float32 vectors take 15 MB: numpy's ``einsum`` reads them at memory
speed, about 0.6 ms of one core, and pushes the model's weights out of the CPU's cache on
the way (the next query's model run then takes about 0.3 ms more). `Scorer` keeps an int8
copy instead (each row scaled by its largest component: 3.8 MB), held by an ONNX Runtime
session as a constant, which it packs once for its integer kernels: about 0.25 ms a query.
The query is rounded to uint8 on each call (``DynamicQuantizeLinear``, the same pattern as
`mcpmount.semantic._int8_graph`), and the int8 cosines come within about 0.003 of the
float32 ones.

So that the nearest tools, and their order, stay those of the float32 vectors, the
`CANDIDATES` best by the int8 scores are computed again from the float32 rows, and every
other score is capped at the lowest of those: a caller taking the best ``n <= CANDIDATES``
gets the float32 ranking whenever its ``n`` are among the int8 scan's best `CANDIDATES`
(with errors of 0.003, a tool would have to rank below 90 others it beats).

Under `MIN_ROWS` rows, or without ``onnx`` to write the session's graph, the float32 rows
are scanned with ``einsum`` as they are.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any, Final

import numpy as np

from mcpmount.semantic._embedding import Vectors, open_session

__all__ = ["CANDIDATES", "MIN_ROWS", "Scorer", "import_onnx"]

logger = logging.getLogger("mcpmount.semantic")

CANDIDATES: Final = 100
"""Rows whose cosine is computed again from the float32 vectors."""

MIN_ROWS: Final = 2048
"""Fewer rows are scanned in float32: under 0.15 ms, not worth a session (about 20 ms)."""

_FLOAT: Final = 1  # onnx.TensorProto.FLOAT
_INT64: Final = 7  # onnx.TensorProto.INT64


class Scorer:
    """Scores of queries against the rows of ``matrix`` (unit vectors, float32, C order):
    cosines, or with ``crowding`` (one value a row) ``2 cos - crowding``.

    Built again whenever either changes; neither may be changed in place.
    """

    __slots__ = ("_session", "crowding", "matrix")

    def __init__(self, matrix: Vectors, crowding: Vectors | None = None) -> None:
        self.matrix = matrix
        self.crowding = crowding
        big = len(matrix) >= MIN_ROWS
        self._session: Any = _session(matrix, crowding) if big else None

    @property
    def int8(self) -> bool:
        """Whether the int8 copy is scanned (else the float32 rows)."""
        return self._session is not None

    def scores(self, query: Vectors) -> Vectors:
        """The score of ``query`` against each row: exact for the `CANDIDATES` best, capped
        at the lowest of those for the rest."""
        matrix, crowding = self.matrix, self.crowding
        if self._session is None:
            cosines = np.einsum("ij,j->i", matrix, query)
            return cosines if crowding is None else 2.0 * cosines - crowding
        outputs: list[Any] = self._session.run(None, {"query": query[None]})
        found: Vectors = outputs[0][0]
        nearest = outputs[1][0]
        exact = np.einsum("ij,j->i", matrix[nearest], query)
        if crowding is not None:
            exact = 2.0 * exact - crowding[nearest]
        np.minimum(found, exact.min(), out=found)
        found[nearest] = exact
        return found


def import_onnx() -> tuple[Any, Any] | None:
    """``onnx.helper`` and ``onnx.numpy_helper``, or None without onnx.

    The first import takes about 0.6 s: the model's load calls this in its worker thread,
    so that the first `Scorer` does not pay for it in the thread that searches.
    """
    try:
        return importlib.import_module("onnx.helper"), importlib.import_module("onnx.numpy_helper")
    except ImportError:
        return None  # the packaged model's load has said so, once


def _session(matrix: Vectors, crowding: Vectors | None) -> Any:
    """An ONNX Runtime session of the int8 scan of ``matrix``; None if it cannot be had."""
    onnx = import_onnx()
    if onnx is None:
        return None
    helper, numpy_helper = onnx
    ort: Any = importlib.import_module("onnxruntime")
    rows, dims = matrix.shape
    scale = np.maximum(np.abs(matrix).max(axis=1), 1e-12) / 127
    stored = np.ascontiguousarray(np.rint(matrix / scale[:, None]).astype(np.int8).T)
    graph = helper.make_graph(
        [
            helper.make_node("DynamicQuantizeLinear", ["query"], ["q", "q_scale", "q_zero"]),
            helper.make_node("Mul", ["q_scale", "row_scale"], ["scale"]),
            helper.make_node("MatMulInteger", ["q", "rows", "q_zero"], ["i32"]),
            helper.make_node("Cast", ["i32"], ["f32"], to=_FLOAT),
            helper.make_node("Mul", ["f32", "scale"], ["cosines"]),
            helper.make_node("Sub", ["cosines", "crowding"], ["scores"]),
            # Here rather than numpy's argpartition: 0.05 ms less a query.
            helper.make_node("TopK", ["scores", "k"], ["_", "nearest"], axis=1, sorted=0),
        ],
        "int8_scores",
        [helper.make_tensor_value_info("query", _FLOAT, [1, dims])],
        [
            helper.make_tensor_value_info("scores", _FLOAT, [1, rows]),
            helper.make_tensor_value_info("nearest", _INT64, [1, CANDIDATES]),
        ],
        [
            numpy_helper.from_array(np.array([CANDIDATES], np.int64), "k"),
            numpy_helper.from_array(stored, "rows"),
            # With crowding, 2 cos - r: the doubling folded into the rows' scales.
            numpy_helper.from_array(
                (scale * (1 if crowding is None else 2)).astype(np.float32), "row_scale"
            ),
            numpy_helper.from_array(
                np.zeros(rows, np.float32) if crowding is None else crowding.astype(np.float32),
                "crowding",
            ),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what ONNX Runtime 1.17, the oldest the extra allows, reads
    try:
        return open_session(ort, model.SerializeToString())
    except Exception as exc:  # ONNX Runtime raises its own types; float32 still works
        logger.warning("tool vectors are scanned in float32 (%s: %s)", type(exc).__name__, exc)
        return None
