"""What ``mcpmount log`` reads: a call log file and its rotated files, filtered, then followed.

`LogTail.read` reads the rotated files oldest first (``calls.jsonl.5`` ...
``calls.jsonl.1``), then the file itself, and keeps the last records that pass a
`LogFilter`. `LogTail.follow` then yields each record appended after that, across
rotations: when the file at the path is no longer the one it reads (serve renamed it to
``.1`` and opened a new one), it reads what is left of the old one and opens the new
one. A line that does not parse (a record cut by a crash) is skipped.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections import deque
from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Final

import anyio

from mcpmount.serve.calllog._record import Record

__all__ = ["LogFilter", "LogTail", "rotated_files"]

POLL: Final = 0.2
"""Seconds between looks at a followed file."""


@dataclass(frozen=True)
class LogFilter:
    """Which records to show; each condition given must hold."""

    principal: str | None = None
    """The principal, exactly."""
    server: str | None = None
    """The server, exactly."""
    name: str | None = None
    """A shell glob the name (a tool's or prompt's public name, a URI) must match."""
    outcomes: frozenset[str] | None = None
    """The outcomes to show."""
    since: datetime | None = None
    """Show records of requests that arrived at or after this time."""

    def matches(self, record: Record) -> bool:
        """Whether ``record`` passes every condition."""
        if self.principal is not None and record.get("principal") != self.principal:
            return False
        if self.server is not None and record.get("server") != self.server:
            return False
        if self.name is not None:
            name = record.get("name")
            if not isinstance(name, str) or not fnmatch.fnmatchcase(name, self.name):
                return False
        if self.outcomes is not None and record.get("outcome") not in self.outcomes:
            return False
        return self.since is None or _time(record) >= self.since


def _time(record: Record) -> datetime:
    try:
        return datetime.fromisoformat(str(record.get("time")).replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)


def rotated_files(path: Path) -> list[Path]:
    """The rotated files of the log at ``path`` that exist, oldest first."""
    numbered: list[tuple[int, Path]] = []
    for each in path.parent.glob(glob_escape(path.name) + ".*"):
        suffix = each.name[len(path.name) + 1 :]
        if suffix.isdigit():
            numbered.append((int(suffix), each))
    return [each for _, each in sorted(numbered, reverse=True)]


def glob_escape(name: str) -> str:
    """``name`` with the characters a glob would read as a pattern escaped."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


def _records(lines: Iterable[str]) -> Iterable[Record]:
    for line in lines:
        try:
            record: object = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record  # pyright: ignore[reportUnknownArgumentType]


class LogTail:
    """The log at ``path``: read its last records (`read`), then follow it (`follow`) from
    exactly where the reading stopped, so that no record is missed or shown twice.

    Close it (or leave its ``with`` block) to close the file it holds open.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stream: IO[str] | None = None
        self._pending = ""

    def __enter__(self) -> LogTail:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file it reads; idempotent."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def read(self, only: LogFilter, last: int | None) -> list[Record]:
        """The last ``last`` records (None: all) of the log and its rotated files that pass
        ``only``, oldest first.

        Raises:
            FileNotFoundError: Neither the log nor any rotated file exists.
        """
        files = rotated_files(self.path)
        self.close()
        self._stream = _open(self.path)
        if not files and self._stream is None:
            raise FileNotFoundError(self.path)
        kept: deque[Record] = deque(maxlen=last)
        for each in files:
            with each.open(encoding="utf-8", errors="replace") as stream:
                kept.extend(r for r in _records(stream) if only.matches(r))
        kept.extend(r for r in self._new_records() if only.matches(r))
        return list(kept)

    async def follow(self, only: LogFilter) -> AsyncGenerator[Record]:
        """Yield each record that passes ``only`` as it is appended, from where `read`
        stopped (or from the log's start, when it did not exist then), across rotations,
        until cancelled."""
        while True:
            if self._stream is None:
                self._stream = _open(self.path)
            for record in self._new_records():
                if only.matches(record):
                    yield record
            if self._stream is not None and _replaced(self.path, self._stream):
                self.close()  # what it held was read to its end just now
                self._pending = ""
                continue
            await anyio.sleep(POLL)

    def _new_records(self) -> list[Record]:
        """The whole records appended since the last look (a partial line waits)."""
        if self._stream is None:
            return []
        self._pending += self._stream.read()
        *lines, self._pending = self._pending.split("\n")
        return list(_records(lines))


def _open(path: Path) -> IO[str] | None:
    try:
        return path.open(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def _replaced(path: Path, stream: IO[Any]) -> bool:
    """Whether the file at ``path`` is no longer the one ``stream`` reads (rotated away)."""
    try:
        return os.stat(path).st_ino != os.fstat(stream.fileno()).st_ino
    except FileNotFoundError:
        return False  # between the rename and the new file: look again later
