"""The packaged model's graph with its MatMuls in int8, by ONNX Runtime's quantizer; built
once and cached.

The packaged all-MiniLM-L6-v2 stores each weight as int8 with a float32 scale per output
column, turned back into float32 inside the graph by a ``Cast`` and a ``Mul``. ONNX Runtime
folds those two nodes at load, so as shipped every MatMul runs in float32 and a run reads
four times the weight bytes. `quantize` has ONNX Runtime's own tools redo it in int8:
``quant_pre_process`` folds the graph (the weights become float32 constants), then
``quantize_dynamic`` rounds each MatMul weight to int8 per output column (which gives back
the shipped int8 weights bit for bit: each column's largest stored value is 127) and rounds
``x`` to uint8 on each run (``DynamicQuantizeLinear``), for ``MatMulInteger`` (a ten-token
query: about 3.8 ms of one core down to 1.3 ms). Only the activations are rounded, and the
vectors stay within a cosine of 0.99 of the float graph's (the caller checks this on probe
texts before use). ``tests/bench/bench_semantic.py`` measures it against the hand-written
rewrite this replaced.

`int8_graph` keeps the result under the index's cache directory, named by all that
determines it (the source's SHA-256, `QUANTIZATION`, the ONNX Runtime and onnx versions),
written whole (a temporary file, then a rename), beside a ``.sha256`` file holding its
digest: a graph whose bytes no longer match is rebuilt, with a warning, never loaded. The
quantizer needs the ``onnx`` package (the ``semantic`` extra installs it).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import re
import tempfile
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["QUANTIZATION", "Int8Graph", "Int8GraphError", "int8_graph", "quantize"]

logger = logging.getLogger("mcpmount.semantic")

QUANTIZATION: Final = "ort-dynamic-matmul-s8-column-1"
"""Names the quantization and its settings (ONNX Runtime's dynamic quantization of the
MatMuls, int8 weights per column, uint8 activations); changed whenever what `quantize`
asks for changes, so that an older cached graph is not reused."""
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
            'the int8 graph needs the onnx package: pip install "mcpmount[semantic]"'
        ) from None


def quantize(shipped: bytes) -> bytes:
    """The graph ``shipped`` with its MatMul weights in int8 (see the module docstring).

    Blocking, a few seconds of one core and a few hundred MB while it runs (the quantizer
    works on files, in a temporary directory).

    Raises:
        Int8GraphError: onnx is missing.
        Exception: whatever ONNX Runtime's quantizer raises on a graph it cannot handle.
    """
    _onnx()
    quantization: Any = importlib.import_module("onnxruntime.quantization")
    with tempfile.TemporaryDirectory(prefix="mcpmount-int8-") as temp:
        source, folded, quantized = (Path(temp, f) for f in ("in.onnx", "folded.onnx", "int8.onnx"))
        source.write_bytes(shipped)  # the bytes whose digest was checked, not the file again
        with _root_logger_kept():
            # Symbolic shape inference would need sympy; ONNX's own shape inference
            # suffices for a BERT encoder (every weight MatMul is quantized without it).
            quantization.quant_pre_process(str(source), str(folded), skip_symbolic_shape=True)
            quantization.quantize_dynamic(
                folded,
                quantized,
                weight_type=quantization.QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        return quantized.read_bytes()


@contextmanager
def _root_logger_kept() -> Generator[None]:
    """Undo what ``quantize_dynamic`` does to the root logger.

    It logs through the root logger (``logging.info``), and the first such call in a
    process whose logging nobody configured gives the root logger a stderr handler
    (``logging.basicConfig``): for the whole process, the host's to decide. A handler added
    to the root logger while it runs is removed again (one a host thread added in those
    seconds would be too: hosts configure logging at start, before any model loads).
    """
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        yield
    finally:
        for handler in list(root.handlers):
            if handler not in before:
                root.removeHandler(handler)
                handler.close()


def cache_name(source_sha256: str) -> str:
    """The file name of the int8 graph of the source with ``source_sha256``, here."""
    ort_version = str(importlib.import_module("onnxruntime").__version__)
    onnx_version = str(_onnx().__version__)
    parts = (source_sha256[:16], QUANTIZATION, f"ort{ort_version}", f"onnx{onnx_version}")
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
        Int8GraphError: onnx is missing, or ``source`` changed meanwhile.
        Exception: whatever ``check`` or the quantizer raises, or a reading of ``source``
            fails with.
    """
    path = cache_dir / "models" / cache_name(source_sha256) if cache_dir is not None else None
    if path is not None and (kept := _cached(path)) is not None:
        return kept
    shipped = source.read_bytes()
    if _sha256(shipped) != source_sha256:
        raise Int8GraphError(f"{source} changed while it was being loaded")
    data = quantize(shipped)
    check(data)
    digest = _sha256(data)
    if path is not None:
        try:
            _write_whole(path, data)
            _write_whole(path.with_suffix(".sha256"), f"{digest}\n".encode("ascii"))
        except OSError as exc:
            logger.warning("cannot keep the int8 graph in %s (%s): built anew next time", path, exc)
    return Int8Graph(data, digest, built=True)
