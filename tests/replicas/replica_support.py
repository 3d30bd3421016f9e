"""A real HAProxy in front of `mcpmount serve --stateless` replicas, for tests and benchmarks.

`replicated(config, directory)` starts ``count`` replicas of ``mcpmount serve CONFIG
--transport http --stateless`` (each a subprocess in its own session, writing its port with
``--portfile``), then Debian's HAProxy (installed by .ci/run) in front of them, in the
foreground (``-db``: no daemon, no master-worker, no pid file), in its own session too.
Every session is recorded with the leak checker; on exit HAProxy and the replicas are
stopped and reaped. Each replica mounts its own copy of the config's upstream servers.

HAProxy cannot be told to bind port 0, so a free port is picked (bind port 0, close it) and
HAProxy is started again on another one if it fails to bind (another process took it in
between), a bounded number of times.

HAProxy's config is haproxy_support.py's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import anyio.abc
from mcp import Client

from leaks import record_group
from replicas.haproxy_support import HAPROXY, haproxy_config
from support import free_port

__all__ = ["Cluster", "Replica", "replicated", "stateless_client"]

STARTUP: Final = 40.0
"""Seconds for a replica to start, or its servers to mount, on a loaded machine."""

STOP: Final = 20.0
"""Seconds for a replica or HAProxy to exit after SIGTERM before it is killed."""

_BIND_ATTEMPTS: Final = 5
"""Ports tried before giving up on starting HAProxy (each free a moment before)."""


@dataclass
class Replica:
    """One `mcpmount serve` process behind the load balancer."""

    name: str
    """HAProxy's name for it (``r0``, ``r1``, ...)."""
    url: str
    """Its own MCP endpoint, not through HAProxy."""
    process: anyio.abc.Process
    log: Path
    """Its stderr."""

    def kill(self) -> None:
        """SIGKILL the replica (not its upstream servers: its watchdog ends those)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()


@dataclass
class Cluster:
    """HAProxy's URL and the replicas behind it."""

    url: str
    """The MCP endpoint clients use, through HAProxy."""
    replicas: list[Replica]
    stats_socket: Path
    haproxy_log: Path

    async def stats(self) -> list[dict[str, str]]:
        """HAProxy's ``show stat`` rows (one per frontend, backend and server), as dicts."""
        raw = await _ask(self.stats_socket, b"show stat")
        header, *rows = raw.decode().strip().splitlines()
        keys = header.removeprefix("# ").split(",")
        return [dict(zip(keys, row.split(","), strict=False)) for row in rows]

    async def served_requests(self) -> dict[str, int]:
        """How many HTTP responses each replica has sent (HAProxy's per-server counters)."""
        counts: dict[str, int] = {}
        for row in await self.stats():
            if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND"):
                counts[row["svname"]] = sum(int(row[f"hrsp_{k}xx"] or 0) for k in range(1, 6))
        return counts

    async def in_flight(self) -> dict[str, int]:
        """How many requests each replica has open now (HAProxy's ``scur``; health checks
        are not counted)."""
        return {
            row["svname"]: int(row["scur"] or 0)
            for row in await self.stats()
            if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    async def states(self) -> dict[str, str]:
        """Each replica's state as HAProxy's health checks see it (``UP``, ``DOWN``, ...)."""
        return {
            row["svname"]: row["status"]
            for row in await self.stats()
            if row["pxname"] == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND")
        }


def stateless_client(url: str, mode: str) -> Client:
    """An SDK Client for a stateless endpoint: no response cache, so each list is fresh."""
    return Client(url, mode=mode, cache=None)


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM the process; SIGKILL its process group if it has not exited in time."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
    with anyio.CancelScope(shield=True):
        with anyio.move_on_after(STOP):
            await process.wait()
        if process.returncode is None:  # not reaped, so its group is still its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def _spawn_replica(
    stack: AsyncExitStack, name: str, command: list[str], directory: Path
) -> tuple[anyio.abc.Process, Path]:
    portfile, log = directory / f"{name}.port", directory / f"{name}.log"
    with log.open("w") as errlog:
        process = await anyio.open_process(
            [*command, "--portfile", str(portfile)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            start_new_session=True,
        )
    record_group(process.pid)
    await stack.enter_async_context(process)
    stack.push_async_callback(_stop, process)
    return process, portfile


async def _stop_all(processes: Sequence[anyio.abc.Process]) -> None:
    """Stop the replicas at once (each drains a moment on SIGTERM before it exits); each
    one's own `_stop` then finds it reaped."""
    async with anyio.create_task_group() as tg:
        for process in processes:
            tg.start_soon(_stop, process)


async def _serving(name: str, process: anyio.abc.Process, portfile: Path) -> Replica:
    log, port = portfile.with_suffix(".log"), anyio.Path(portfile)
    with anyio.fail_after(STARTUP):
        while not await port.exists():
            if process.returncode is not None:
                raise RuntimeError(f"replica {name} exited: {log.read_text()[-2000:]}")
            await anyio.sleep(0.02)
    url = f"http://127.0.0.1:{(await port.read_text()).strip()}/mcp"
    return Replica(name, url, process, log)


async def _runs(stats_socket: Path) -> bool:
    """Whether HAProxy answers on its stats socket: it does only once every listener is
    bound. (The socket file, or something accepting on the port, may come first: the file
    from an attempt about to fail to bind, the port from whoever had taken it.)"""
    try:
        return b"Pid:" in await _ask(stats_socket, b"show info")
    except (OSError, anyio.BrokenResourceError):
        return False


async def _ask(stats_socket: Path, command: bytes) -> bytes:
    """HAProxy's whole answer to ``command`` on its stats socket."""
    async with await anyio.connect_unix(str(stats_socket)) as stream:
        await stream.send(command + b"\n")
        raw = b""
        with contextlib.suppress(anyio.EndOfStream):
            while True:
                raw += await stream.receive()
    return raw


async def _start_haproxy(
    stack: AsyncExitStack,
    directory: Path,
    replicas: list[Replica],
    *,
    idempotent_tools: tuple[str, ...],
    health_path: str | None,
) -> Cluster:
    if HAPROXY is None:
        raise RuntimeError("haproxy is not installed: `apt-get install haproxy` (.ci/run does)")
    # A Unix socket's path must fit in 108 bytes: pytest's tmp_path may not.
    sockets = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcpmount-lb-")))
    stats_socket = sockets / "stats.sock"
    ports = [int(r.url.rsplit(":", 1)[1].split("/", 1)[0]) for r in replicas]
    log = directory / "haproxy.log"
    log.write_text("")
    for _ in range(_BIND_ATTEMPTS):
        port, start = free_port(), log.stat().st_size
        # A failed attempt may leave its socket file behind: the wait below must see this one's.
        stats_socket.unlink(missing_ok=True)
        config = directory / "haproxy.cfg"
        config.write_text(
            haproxy_config(
                port=port,
                replicas=ports,
                stats_socket=stats_socket,
                idempotent_tools=idempotent_tools,
                health_path=health_path,
            )
        )
        with log.open("a") as errlog:  # every attempt's messages, one after the other
            process = await anyio.open_process(
                [HAPROXY, "-db", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=errlog,
                stderr=errlog,
                start_new_session=True,
            )
        record_group(process.pid)
        with anyio.fail_after(STARTUP):
            while process.returncode is None and not await _runs(stats_socket):
                await anyio.sleep(0.02)
        if process.returncode is None:
            await stack.enter_async_context(process)
            stack.push_async_callback(_stop, process)
            cluster = Cluster(f"http://127.0.0.1:{port}/mcp", replicas, stats_socket, log)
            with anyio.fail_after(STARTUP):  # each replica's first health check passed
                while set((await cluster.states()).values()) != {"UP"}:
                    await anyio.sleep(0.05)
            return cluster
        await process.aclose()
        with log.open() as attempt:
            attempt.seek(start)
            if "cannot bind" not in attempt.read():
                break  # not a port taken in between: a bad config, say
    raise RuntimeError(f"haproxy did not start: {log.read_text()[-2000:]}")


@asynccontextmanager
async def replicated(
    config: str,
    directory: Path,
    *,
    count: int = 3,
    shared_state: str | None = None,
    idempotent_tools: Iterable[str] = (),
    health_path: str | None = "/readyz",
    flags: Sequence[str] = (),
) -> AsyncGenerator[Cluster]:
    """``count`` stateless `mcpmount serve CONFIG` replicas behind HAProxy; yield the `Cluster`.

    Args:
        config: The config every replica serves (each mounts its own upstream servers).
        directory: Where logs and HAProxy's config go.
        count: How many replicas.
        shared_state: Passed to every replica as ``--shared-state URL`` (a Redis URL).
        idempotent_tools: Tools whose calls HAProxy may replay on another replica.
        health_path: What HAProxy's health checks ask each replica: ``/readyz`` (200 once
            its initial mounts are done and its required servers are up), or None for a
            plain TCP connect.
        flags: More ``serve`` flags for every replica.
    """
    command = [sys.executable, "-m", "mcpmount", "serve", config, "--transport", "http"]
    command += ["--port", "0", "--stateless", *flags]
    if shared_state is not None:
        command += ["--shared-state", shared_state]
    async with AsyncExitStack() as stack:
        # All start at once; the stack's callbacks are pushed from this task.
        spawned = [await _spawn_replica(stack, f"r{i}", command, directory) for i in range(count)]
        stack.push_async_callback(_stop_all, [process for process, _ in spawned])
        replicas = [await _serving(f"r{i}", *p) for i, p in enumerate(spawned)]
        yield await _start_haproxy(
            stack,
            directory,
            replicas,
            idempotent_tools=tuple(idempotent_tools),
            health_path=health_path,
        )
