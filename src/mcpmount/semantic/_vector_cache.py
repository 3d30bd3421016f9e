"""Tool vectors kept on disk between runs, one append-only file per model.

The file ``<dir>/<model SHA-256, 16 hex digits>-<dims>.vectors`` starts with `_MAGIC` and
then holds records of an 8-byte little-endian text key (the xxh3-64 of the tool text, see
`mcpmount.semantic._ranker`) and ``dims`` little-endian float32. Each batch is appended in
one ``write`` (``O_APPEND``), so processes sharing the file only ever add whole batches. A
torn last record, or a vector that is not of finite unit length, is ignored; a file without
the header is removed. The cache is an optimization only: any failure to read or write it
is logged and skipped. It is a `mcpmount.semantic._vector_store.VectorStore`: the file is read
once, by the first `VectorCache.get`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np

from mcpmount.semantic._embedding import Vectors
from mcpmount.semantic._vector_store import valid_rows

__all__ = ["VectorCache"]

logger = logging.getLogger("mcpmount.semantic")

_MAGIC: Final = b"mcpmount-vectors-1\n"


class VectorCache:
    """The on-disk vectors of one model.

    Args:
        directory: Where the files live; created on the first write.
        model_sha256: The SHA-256 of the graph that runs (`Embedder.sha256`: for the packaged
            model, its int8 graph's), naming its file: two graphs' vectors never mix.
        dims: The model's vector size.
    """

    __slots__ = ("_known", "_lock", "dims", "path")

    def __init__(self, directory: Path, model_sha256: str, dims: int) -> None:
        self.dims = dims
        self.path = directory / f"{model_sha256[:16]}-{dims}.vectors"
        self._known: dict[int, Vectors] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<VectorCache {self.path}>"

    def _dtype(self) -> np.dtype[np.void]:
        return np.dtype([("key", "<u8"), ("vector", "<f4", (self.dims,))])

    def get(self, keys: Sequence[int]) -> dict[int, Vectors]:
        """The vectors of ``keys`` in the file (read by the first call)."""
        with self._lock:
            if self._known is None:
                self._known = self.load()
            known = self._known
            return {key: known[key] for key in keys if key in known}

    def put(self, vectors: Mapping[int, Vectors]) -> None:
        """Add ``vectors`` to the file (`append`) and to what `get` returns."""
        self.append(vectors)
        with self._lock:
            if self._known is not None:
                self._known.update(vectors)

    def load(self) -> dict[int, Vectors]:
        """Every valid vector in the file, by text key; empty if there is none."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            logger.warning("cannot read the vector cache %s: %s", self.path, exc)
            return {}
        if not raw.startswith(_MAGIC):
            logger.warning("replacing the vector cache %s: not one of ours", self.path)
            self.path.unlink(missing_ok=True)  # our file name: the next write starts anew
            return {}
        dtype = self._dtype()
        body = raw[len(_MAGIC) :]
        records = np.frombuffer(body, dtype, len(body) // dtype.itemsize)
        vectors = records["vector"].astype(np.float32)
        good = valid_rows(vectors)
        keys = records["key"][good].tolist()
        return dict(zip(keys, vectors[good], strict=True))

    def append(self, vectors: Mapping[int, Vectors]) -> None:
        """Add ``vectors`` (text key -> vector) to the file in one write."""
        if not vectors:
            return
        records = np.zeros(len(vectors), self._dtype())
        records["key"] = list(vectors)
        records["vector"] = np.stack(list(vectors.values()))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:  # the header, by whichever process creates the file
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as file:
                    file.write(_MAGIC)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, records.tobytes())
            finally:
                os.close(fd)
        except OSError as exc:
            logger.warning("cannot write the vector cache %s: %s", self.path, exc)
