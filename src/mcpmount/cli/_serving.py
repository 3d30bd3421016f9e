"""What ``mcpmount status CONFIG`` reads of a running ``serve`` of that config.

Each serve answers on its status socket (`mcpmount.serve.status_sockets`) with one line of
JSON: its pid, transport, start time and its servers' rows. A socket nothing listens on
(its serve was killed) is skipped, and removed once its pid is gone; a serve that does
not answer within `ASK_WITHIN` seconds is skipped with a warning.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import anyio
from rich.console import Console
from rich.text import Text

__all__ = ["ASK_WITHIN", "Serving", "running_serves"]

ASK_WITHIN = 2.0
"""Seconds a serve gets to answer on its status socket."""

_MAX_ANSWER = 16 * 1024 * 1024
"""Bytes an answer may take: a status is a few hundred bytes a server."""


@dataclass(frozen=True, slots=True)
class Serving:
    """One running serve of the config, as it answered."""

    pid: int
    transport: str
    """``"stdio"`` or ``"http"``."""
    since: float
    """When it began serving (seconds since the epoch)."""
    servers: list[dict[str, object]]
    """Its rows, as ``mcpmount status --json`` prints them (`mcpmount.registry.status_json`)."""


async def running_serves(config: Path, err: Console) -> list[Serving]:
    """Ask every running serve of ``config`` for its status; [] when none runs."""
    from mcpmount.serve import status_sockets  # the serving side loads only here

    answers: dict[int, Serving] = {}

    async def ask(pid: int, path: Path) -> None:
        try:
            with anyio.fail_after(ASK_WITHIN):
                answer = await _read(path)
        except TimeoutError:
            err.print(Text(f"mcpmount: serve pid {pid} did not answer within {ASK_WITHIN} s"))
            return
        except OSError as exc:
            if exc.errno == errno.ECONNREFUSED:
                _forget(pid, path)
            return
        if (serving := _parsed(pid, answer)) is not None:
            answers[pid] = serving

    async with anyio.create_task_group() as tg:
        for pid, path in status_sockets(config).items():
            tg.start_soon(ask, pid, path)
    return [answers[pid] for pid in sorted(answers)]


async def _read(path: Path) -> bytes:
    """Everything the socket at ``path`` sends before it closes (at most `_MAX_ANSWER`)."""
    received = bytearray()
    async with await anyio.connect_unix(path) as stream:
        try:
            async for chunk in stream:
                received += chunk
                if len(received) > _MAX_ANSWER:
                    break
        except anyio.BrokenResourceError:
            pass  # the serve closed at once: what came is what there is
    return bytes(received)


def _parsed(pid: int, answer: bytes) -> Serving | None:
    """The answer as a `Serving`; None if it is not the JSON a serve sends."""
    try:
        body = json.loads(answer)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    body = cast(Mapping[str, object], body)
    servers, since = body.get("servers"), body.get("since")
    if not isinstance(servers, list) or not isinstance(since, int | float):
        return None
    listed = cast(list[object], servers)
    if not all(isinstance(row, dict) for row in listed):
        return None
    rows = [cast(dict[str, object], row) for row in listed]
    return Serving(pid, str(body.get("transport", "")), float(since), rows)


def _forget(pid: int, path: Path) -> None:
    """Remove ``path``, a socket nothing listens on, once its serve (``pid``) is gone: a
    serve that was killed leaves it."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or another user's process has it now
        path.unlink(missing_ok=True)
