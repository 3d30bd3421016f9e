"""A real Redis server for tests: `redis-server` from the Debian package `.ci/run` installs.

Each `running_redis` starts its own server on a Unix socket in a fresh directory (no TCP
port to race for, nothing shared between tests), without persistence, in its own process
session (recorded for the leak checker). `RedisServer.restart` stops it and starts it again
on the same socket, empty, as a crashed and recovered Redis would be; `stop` leaves it down.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import anyio.abc

from leaks import record_group

__all__ = ["REDIS_SERVER", "RedisServer", "running_redis"]

REDIS_SERVER: Final = shutil.which("redis-server")

_READY: Final = 30.0
"""Seconds for redis-server to accept connections on a loaded machine."""


class RedisServer:
    """One redis-server process on a Unix socket; ``url`` is what a config names."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "redis.sock"
        self.url = f"unix://{self.socket}"
        self._process: anyio.abc.Process | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError(
                "redis-server is not installed: `apt-get install redis-server` (.ci/run does it)"
            )
        self.socket.unlink(missing_ok=True)
        args = [
            REDIS_SERVER,
            "--port", "0",  # no TCP
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        self._process = await anyio.open_process(
            args, stdin=subprocess.DEVNULL, stdout=None, stderr=None, start_new_session=True
        )
        process = self._process
        record_group(process.pid)
        with anyio.fail_after(_READY):
            while not await self._answers():
                if process.returncode is not None:
                    log = await anyio.Path(self.directory / "redis.log").read_text(errors="replace")
                    raise RuntimeError(f"redis-server exited: {log[-2000:]}")
                await anyio.sleep(0.02)

    async def _answers(self) -> bool:
        try:
            async with await anyio.connect_unix(str(self.socket)) as stream:
                await stream.send(b"PING\r\n")
                return (await stream.receive()).startswith(b"+PONG")
        except OSError:
            return False

    async def stop(self) -> None:
        """Kill the server (SIGKILL: no goodbye to its clients) and reap it."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()

    async def restart(self) -> None:
        """Stop the server and start a fresh, empty one on the same socket."""
        await self.stop()
        await self.start()


@asynccontextmanager
async def running_redis() -> AsyncGenerator[RedisServer]:
    """A started `RedisServer`, stopped and its directory removed on exit."""
    with tempfile.TemporaryDirectory(prefix="mcpmount-redis-") as directory:
        server = RedisServer(Path(directory))
        try:
            await server.start()
            yield server
        finally:
            await server.stop()
