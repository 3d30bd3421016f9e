"""Where call log records go: a JSON-lines file rotated by size, stdout, or OpenTelemetry.

Every sink is written from the event loop, one record at a time, and never raises into the
request it records: a full disk or a closed stdout costs the log a record (logged once at
warning), never a client its answer. The file is flushed after every record, so that
``mcpmount log --follow`` sees it at once and a crash loses none.

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
from typing import Any, Protocol

from opentelemetry._logs import LogRecord, SeverityNumber, get_logger

from mcpmount.serve.calllog._record import Record, line_of

__all__ = ["JsonLinesFile", "OtelLogs", "Sink", "Stdout"]

logger = logging.getLogger(__name__)


class Sink(Protocol):
    """Where records are written."""

    def write(self, record: Record) -> None:
        """Write one record."""
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
            stream = self._stream()
            stream.write(line)
            stream.flush()
            self._size += len(line)
        except Exception as exc:  # the log loses a record, the client nothing
            self._failing.tell(exc)

    def close(self) -> None:
        self._handler.close()


class Stdout:
    """Records written to this process's stdout (HTTP ``serve``: stdio's is the MCP stream)."""

    def __init__(self) -> None:
        self._failing = _Failing("stdout")

    def write(self, record: Record) -> None:
        try:
            sys.stdout.write(line_of(record))
            sys.stdout.flush()
        except Exception as exc:
            self._failing.tell(exc)

    def close(self) -> None:
        pass


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

    def close(self) -> None:
        pass
