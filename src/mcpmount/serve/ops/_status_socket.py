"""Where a running ``serve`` tells ``mcpmount status`` how its servers are.

Each ``serve`` of a config file listens, while it serves, on a unix socket of its own:
``<key>-<pid>.sock`` in the user's runtime directory (`status_directory`), where ``key``
is a hash of the config file's resolved path, so that every serve of one config (replicas
on one machine) is found by that path alone (`status_sockets`). A client that connects is
sent one line of JSON and the socket is closed::

    {"pid": 4242, "config": "/srv/servers.toml", "transport": "http",
     "since": 1767225600.0, "servers": [{"server": "fs", "state": "ready", ...}]}

``servers`` are the rows ``mcpmount status --json`` prints (`mcpmount.registry.status_json`):
names, states, pids, calls and latency, errors, never an environment value, a header or a
token. Still, they name every server and tool, so only the user who runs ``serve`` may
connect: the directory is created 0700 and refused if anyone else owns it or may enter it,
and the socket is 0600. A socket left by a serve that was killed answers nothing (its
connection is refused); readers skip it and may remove it.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import xxhash
from anyio.abc import SocketStream

from mcpmount.config import RegistryConfig
from mcpmount.registry import MountOutcome, Registry, status_json

__all__ = ["publish_status", "served_status", "status_directory", "status_sockets"]

logger = logging.getLogger(__name__)

_ANSWER_WITHIN = 5.0
"""Seconds one reader gets to take its answer before it is cut off."""


def status_directory() -> Path:
    """The directory of the status sockets: ``$XDG_RUNTIME_DIR/mcpmount``, or
    ``mcpmount-<uid>`` in the temporary directory where there is no runtime directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / "mcpmount"
    return Path(tempfile.gettempdir()) / f"mcpmount-{os.getuid()}"


def _key(config: Path) -> str:
    """What names the sockets of ``config``: a hash of its resolved path."""
    return xxhash.xxh3_64_hexdigest(os.fsencode(config.resolve()))


def status_sockets(config: str | os.PathLike[str]) -> dict[int, Path]:
    """The status socket of each serve of ``config`` by pid (some may be stale: a killed
    serve leaves its socket); none where the directory is not this user's alone, since
    anyone who made it could answer there."""
    directory = status_directory()
    try:
        _check_own(directory)
    except OSError:
        return {}
    found: dict[int, Path] = {}
    for path in directory.glob(f"{_key(Path(config))}-*.sock"):
        pid = path.stem.rpartition("-")[2]
        if pid.isdigit():
            found[int(pid)] = path
    return dict(sorted(found.items()))


def served_status(
    registry: Registry,
    config: RegistryConfig,
    retrying: Mapping[str, Mapping[str, object]] | None = None,
) -> list[dict[str, object]]:
    """The rows a serve of ``config`` publishes: its servers as they run now (after any
    reload), then those that failed to mount, then those still starting.

    Args:
        retrying: What `Retries.rows` says of the servers that are down: a failed row
            takes its latest error, its failed ``attempts`` and what is next (``retry``).
    """
    retrying = retrying or {}
    specs = {**config.servers, **{each.server: each.spec for each in registry.listings()}}
    rows = registry.status()
    up = {row.server for row in rows}
    failures: dict[str, str | None] = {s: e.detail for s, e in registry.failures.items()}
    failures |= dict.fromkeys(retrying)  # before the first mounts all ended
    failed = [
        MountOutcome(server, specs[server], 0.0)
        for server in sorted(failures)
        if server in specs and server not in up
    ]
    report = status_json(rows, failed, specs, config.settings)
    for row in report[len(rows) :]:
        server = str(row["server"])
        row.update({"state": "failed", "error": failures[server], **retrying.get(server, {})})
    listed = {row["server"] for row in report}
    mounting = [MountOutcome(s, spec, 0.0) for s, spec in config.servers.items() if s not in listed]
    for row in status_json([], mounting, specs, config.settings):  # a failed row's keys
        report.append(row | {"state": "starting"})
    return report


def _made_ready(config: Path, transport: str) -> tuple[Path, dict[str, object]]:
    """This serve's socket path for ``config`` (its directory made ready) and what each
    answer begins with."""
    directory = status_directory()
    _own_directory(directory)
    header: dict[str, object] = {
        "pid": os.getpid(),
        "config": str(config.resolve()),
        "transport": transport,
        "since": time.time(),
    }
    return directory / f"{_key(config)}-{os.getpid()}.sock", header


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _own_directory(directory: Path) -> None:
    """Create ``directory`` (0700) unless it is there; refuse one this user does not own
    alone.

    Raises:
        OSError: It cannot be created, or it is not a directory of this user's that only
            they may enter.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_own(directory)


def _check_own(directory: Path) -> None:
    """Raise `OSError` unless ``directory`` is a directory of this user's only they enter."""
    found = directory.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        raise OSError(f"{directory} is not a directory of this user's")
    if found.st_mode & 0o077:
        raise OSError(f"{directory} may be entered by other users (mode {found.st_mode & 0o777:o})")


@asynccontextmanager
async def publish_status(
    config: Path | None, transport: str, servers: Callable[[], list[dict[str, object]]]
) -> AsyncGenerator[None]:
    """Answer ``mcpmount status`` on this serve's status socket for the block's length.

    Does nothing for a config without a file (nothing could name it), and where the socket
    cannot be made (a warning says why): serving goes on either way. The socket is removed
    when the block ends.

    Args:
        config: The config file served.
        transport: ``"stdio"`` or ``"http"``, as published.
        servers: The rows to publish, read at each connection.
    """
    if config is None:
        yield
        return
    try:
        path, header = _made_ready(config, transport)
        # The name holds this pid: a socket there was left by a dead process of that pid.
        listener = await anyio.create_unix_listener(path, mode=0o600)
    except OSError as exc:
        logger.warning("mcpmount status cannot find this serve: %s", exc)
        yield
        return

    async def answer(stream: SocketStream) -> None:
        async with stream:
            try:
                line = json.dumps({**header, "servers": servers()}) + "\n"
            except Exception:  # a status that cannot be read must not stop the serving
                logger.exception("the status for mcpmount status could not be read")
                return
            # A reader that never reads is cut off; one that left is told nothing.
            with (
                anyio.move_on_after(_ANSWER_WITHIN),
                suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError),
            ):
                await stream.send(line.encode())

    try:
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, answer)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
    finally:
        _remove(path)
