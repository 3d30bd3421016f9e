"""The packaged model's graph rewritten so that its MatMuls run in int8, built once and cached.

The packaged all-MiniLM-L6-v2 stores each weight as int8 with a float32 scale per output
column, turned back into float32 inside the graph by a ``Cast`` and a ``Mul``. ONNX Runtime
folds those two nodes at load, so as shipped every MatMul runs in float32 and a run reads
four times the weight bytes. `rewrite` turns each ``MatMul(x, Mul(Cast(w_int8), scale))``
into ONNX's dynamic quantization pattern: ``x`` rounded to uint8 on each run
(``DynamicQuantizeLinear``, once per distinct ``x``), ``MatMulInteger`` with the shipped int8
weights as they are, and the int32 product scaled back to float32, which ONNX Runtime fuses
into its integer kernels (a ten-token query: about 3.8 ms of one core down to 1.3 ms). The
weights keep the shipped bits; only the activations are rounded, and the vectors stay within
a cosine of 0.99 of the float graph's (the caller checks this on probe texts before use).

Not ``onnxruntime.quantization.quantize_dynamic``: that needs the folded float32 graph first,
rounds the already int8 weights a second time, and logs through the root logger, which then
gets a handler for the whole process.

`int8_graph` keeps the result under the index's cache directory, named by all that
determines it (the source's SHA-256, `REWRITE`, the ONNX Runtime and onnx versions), written
whole (a temporary file, then a rename), beside a ``.sha256`` file holding its digest: a
graph whose bytes no longer match is rebuilt, with a warning, never loaded. The rewrite needs
the ``onnx`` package (the ``semantic`` extra installs it).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

__all__ = ["REWRITE", "Int8Graph", "Int8GraphError", "int8_graph", "rewrite"]

logger = logging.getLogger("mcpmount.semantic")

REWRITE: Final = "int8-matmulinteger-u8s8-1"
"""Names the rewrite and its settings (uint8 activations, the shipped int8 weights); changed
whenever what `rewrite` produces changes, so that an older cached graph is not reused."""

_FLOAT: Final = 1  # onnx.TensorProto.FLOAT
_NAME_CHARS = re.compile(r"[^0-9A-Za-z.]+")


class Int8GraphError(RuntimeError):
    """The int8 graph could not be built; the caller runs the graph as shipped."""


@dataclass(frozen=True, slots=True)
class Int8Graph:
    """A serialized int8 graph, its SHA-256, and whether this call built it."""

    data: bytes
    sha256: str
    built: bool


def _onnx() -> Any:
    try:
        return importlib.import_module("onnx")
    except ImportError:
        raise Int8GraphError(
            'the int8 rewrite needs the onnx package: pip install "mcpmount[semantic]"'
        ) from None


def rewrite(source: bytes) -> bytes:
    """The graph ``source`` with its int8-stored MatMul weights used as int8.

    Raises:
        Int8GraphError: onnx is missing, or ``source`` has no MatMul whose weight is an int8
            initializer scaled per output column.
    """
    onnx = _onnx()
    helper: Any = importlib.import_module("onnx.helper")
    numpy_helper: Any = importlib.import_module("onnx.numpy_helper")
    model = onnx.load_from_string(source)
    graph = model.graph
    inits: dict[str, Any] = {init.name: init for init in graph.initializer}
    producer: dict[str, Any] = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    outputs = {out.name for out in graph.output}

    def stored_int8(node: Any) -> tuple[Any, Any, np.ndarray[Any, Any]] | None:
        """The Cast and Mul that make ``node``'s weight from int8, and its column scales."""
        weight = node.input[1]
        mul = producer.get(weight)
        if mul is None or mul.op_type != "Mul" or readers.get(weight) != 1 or weight in outputs:
            return None
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or readers.get(mul.input[0]) != 1:
            return None
        if cast.input[0] not in inits or mul.input[1] not in inits:
            return None
        to = [attr.i for attr in cast.attribute if attr.name == "to"]
        stored = numpy_helper.to_array(inits[cast.input[0]])
        scale = numpy_helper.to_array(inits[mul.input[1]])
        if to != [_FLOAT] or stored.dtype != np.int8 or stored.ndim != 2:
            return None
        columns = stored.shape[1]
        if scale.dtype != np.float32 or scale.shape not in ((columns,), (1, columns)):
            return None  # per row, per tensor or anything else: left as it is
        return cast, mul, scale.reshape(-1)

    nodes: list[Any] = []
    dropped: set[int] = set()
    rounded: dict[str, tuple[str, str, str]] = {}
    for node in graph.node:
        found = stored_int8(node) if node.op_type == "MatMul" else None
        if found is None:
            nodes.append(node)
            continue
        cast, mul, scale = found
        dropped.update((id(cast), id(mul)))
        x, out = node.input[0], node.output[0]
        if x not in rounded:
            rounded[x] = (f"{x}/u8", f"{x}/u8_scale", f"{x}/u8_zero")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(rounded[x])))
        x_u8, x_scale, x_zero = rounded[x]
        column_scale = f"{mul.input[1]}/column"
        graph.initializer.append(numpy_helper.from_array(scale, column_scale))
        nodes += [
            helper.make_node("Mul", [x_scale, column_scale], [f"{out}/scale"]),
            helper.make_node("MatMulInteger", [x_u8, cast.input[0], x_zero], [f"{out}/i32"]),
            helper.make_node("Cast", [f"{out}/i32"], [f"{out}/f32"], to=_FLOAT),
            helper.make_node("Mul", [f"{out}/f32", f"{out}/scale"], [out]),
        ]
    if not rounded:
        raise Int8GraphError("the model has no MatMul weights stored as int8 per column")
    del graph.node[:]
    graph.node.extend(node for node in nodes if id(node) not in dropped)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return model.SerializeToString()


def cache_name(source_sha256: str) -> str:
    """The file name of the int8 graph of the source with ``source_sha256``, here."""
    ort_version = str(importlib.import_module("onnxruntime").__version__)
    onnx_version = str(_onnx().__version__)
    parts = (source_sha256[:16], REWRITE, f"ort{ort_version}", f"onnx{onnx_version}")
    return "-".join(_NAME_CHARS.sub("_", part) for part in parts) + ".onnx"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees part of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _cached(path: Path) -> Int8Graph | None:
    """The graph kept at ``path`` if its bytes match its ``.sha256`` file; else None."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("cannot read the cached int8 graph %s (%s): rebuilding it", path, exc)
        return None
    digest = _sha256(data)
    try:
        expected = path.with_suffix(".sha256").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        expected = "none"
    if digest != expected:
        logger.warning(
            "the cached int8 graph %s has SHA-256 %s, its .sha256 file says %s "
            "(damaged or cut short): rebuilding it",
            path,
            digest,
            expected[:64],
        )
        return None
    return Int8Graph(data, digest, built=False)


def int8_graph(
    source: Path, source_sha256: str, cache_dir: Path | None, check: Callable[[bytes], None]
) -> Int8Graph:
    """The int8 graph of ``source``: from ``cache_dir`` if kept there intact, else built.

    A built graph is first passed to ``check``, which raises if it cannot be used, then kept
    under ``cache_dir / "models"`` (a failure to write is logged; the graph is used anyway).
    Without ``cache_dir`` it is built in memory each time.

    Raises:
        Int8GraphError: onnx is missing, or the rewrite does not apply to ``source``.
        Exception: whatever ``check`` raises, or a reading of ``source`` fails with.
    """
    path = cache_dir / "models" / cache_name(source_sha256) if cache_dir is not None else None
    if path is not None and (kept := _cached(path)) is not None:
        return kept
    shipped = source.read_bytes()
    if _sha256(shipped) != source_sha256:
        raise Int8GraphError(f"{source} changed while it was being loaded")
    data = rewrite(shipped)
    check(data)
    digest = _sha256(data)
    if path is not None:
        try:
            _write_whole(path, data)
            _write_whole(path.with_suffix(".sha256"), f"{digest}\n".encode("ascii"))
        except OSError as exc:
            logger.warning("cannot keep the int8 graph in %s (%s): built anew next time", path, exc)
    return Int8Graph(data, digest, built=True)
