"""Where call log records go: a JSON-lines file rotated by size, stdout, or OpenTelemetry.

Every sink is written from the event loop, one record at a time, and never raises into the
request it records: a full disk or a closed stdout costs the log a record (logged once at
warning), never a client its answer. A record is written into the stream's buffer, and
the buffer is flushed every `FLUSH_EVERY` seconds by `open_sink`'s task, not after each
record: a flush is a write system call, which cost 0.15 ms a record on this project's
2-core test machine with its disk busy, more than the whole record otherwise
(tests/bench/gateway_overhead.py). So ``mcpmount log --follow`` sees a record within that
time, a stop (SIGTERM, SIGINT, stdin's end) flushes every record, and a crash (SIGKILL)
loses at most the last `FLUSH_EVERY` seconds.

The file is created owner-only (0600): it names who called what. It is rotated by the
standard library's `RotatingFileHandler` (``calls.jsonl.1`` is the newest backup); one
process writes one file, since rotation is not shared between processes (give each
replica its own file, or use ``"stdout"`` or ``"otel"``).
"""

from __future__ import annotations

import logging
import os
import sys
from io import TextIOWrapper
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any, Final, Protocol

from opentelemetry._logs import LogRecord, SeverityNumber, get_logger

from mcpmount.serve.calllog._record import Record, line_of

__all__ = ["FLUSH_EVERY", "JsonLinesFile", "OtelLogs", "Sink", "Stdout"]

logger = logging.getLogger(__name__)

FLUSH_EVERY: Final = 0.05
"""Seconds between flushes of a sink's buffer (see the module docstring)."""


class Sink(Protocol):
    """Where records are written."""

    def write(self, record: Record) -> None:
        """Write one record."""
        ...

    def flush(self) -> None:
        """Write out what is buffered (called every `FLUSH_EVERY` seconds)."""
        ...

    def close(self) -> None:
        """Flush and close; idempotent."""
        ...


class _Failing:
    """Say once that a sink failed, at warning, naming where it writes."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._told = False

    def tell(self, exc: Exception) -> None:
        if not self._told:
            self._told = True
            logger.warning("call log %s: cannot write (%s); records are lost", self._where, exc)


class _OwnerOnly(RotatingFileHandler):
    """The standard rotating handler, its files created 0600 (they name who called what)."""

    def _open(self) -> TextIOWrapper:
        return open(  # the handler owns the stream, as its base's does
            self.baseFilename,
            "a",
            encoding=self.encoding,
            opener=lambda path, flags: os.open(path, flags, 0o600),
        )


class JsonLinesFile:
    """Records appended to ``path``, rotated once a record would pass ``max_bytes``.

    Args:
        path: The file (its directory must exist).
        max_bytes: The most a file holds before it is rotated; 0: never rotate.
        backups: How many rotated files are kept.
    """

    def __init__(self, path: str | os.PathLike[str], *, max_bytes: int, backups: int) -> None:
        self.path = Path(path)
        self._max = max_bytes
        self._handler = _OwnerOnly(self.path, maxBytes=0, backupCount=backups, encoding="utf-8")
        self._size = os.fstat(self._stream().fileno()).st_size
        self._failing = _Failing(str(self.path))
        self._dirty = False

    def _stream(self) -> Any:
        if self._handler.stream is None:  # pyright: ignore[reportUnnecessaryComparison]
            self._handler.stream = self._handler._open()  # pyright: ignore[reportPrivateUsage]
        return self._handler.stream

    def write(self, record: Record) -> None:
        try:
            line = line_of(record)
            # The size is counted here (a line is ASCII: its length is its bytes), not asked
            # of the file on every record as the handler's own check does.
            if self._max and self._size and self._size + len(line) > self._max:
                self._handler.doRollover()
                self._size = 0
            self._stream().write(line)
            self._size += len(line)
            self._dirty = True
        except Exception as exc:  # the log loses a record, the client nothing
            self._failing.tell(exc)

    def flush(self) -> None:
        if self._dirty:
            self._dirty = False
            try:
                self._stream().flush()
            except Exception as exc:
                self._failing.tell(exc)

    def close(self) -> None:
        self._handler.close()


class Stdout:
    """Records written to this process's stdout (HTTP ``serve``: stdio's is the MCP stream)."""

    def __init__(self) -> None:
        self._failing = _Failing("stdout")
        self._dirty = False

    def write(self, record: Record) -> None:
        try:
            sys.stdout.write(line_of(record))
            self._dirty = True
        except Exception as exc:
            self._failing.tell(exc)

    def flush(self) -> None:
        if self._dirty:
            self._dirty = False
            try:
                sys.stdout.flush()
            except Exception as exc:
                self._failing.tell(exc)

    def close(self) -> None:
        self.flush()


class OtelLogs:
    """Records emitted as OpenTelemetry log records, through the process's logger provider.

    Each has the record's fields as attributes (``mcp.`` + the key; null ones left out),
    a short body (``tools/call fs__read ok``), and the current context: emitted while the
    request's server span is current, it carries the span's trace and span ids. Without an
    installed OpenTelemetry SDK the provider is the API's no-op one, and records go nowhere.
    """

    def __init__(self) -> None:
        self._logger = get_logger("mcpmount.calllog")
        self._failing = _Failing("otel")

    def write(self, record: Record) -> None:
        try:
            attributes = {f"mcp.{key}": value for key, value in record.items() if value is not None}
            failed = record["outcome"] not in ("ok", "input_required")
            said = (record[key] for key in ("method", "name", "outcome"))
            body = " ".join(str(word) for word in said if word)
            self._logger.emit(
                LogRecord(
                    severity_number=SeverityNumber.WARN if failed else SeverityNumber.INFO,
                    severity_text="WARN" if failed else "INFO",
                    body=body,
                    attributes=attributes,
                )
            )
        except Exception as exc:
            self._failing.tell(exc)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
