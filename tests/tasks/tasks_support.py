"""server-everything's task-only tool, run through the library over stdio and streamable HTTP.

server-everything (pinned in conformance/package.json; `npm ci --prefix conformance`) speaks
MCP 2025-11-25 and runs tasks: its `simulate-research-query` has `execution.taskSupport =
"required"` and takes about 4 s (four 1 s stages). Over HTTP it listens on `PORT`; given 0,
the OS picks a port, which `listening_port` reads from /proc (the server logs only `PORT`).
The README's test command and CI install it before `pytest`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio

from conformance.everything_support import everything_command
from leaks import record_group
from mcpmount.config import HttpServer, ServerSpec, StdioServer

RESEARCH: Final = "everything__simulate-research-query"
"""The task-only tool under its public name (namespace ``everything``)."""

STARTUP: Final = 40.0
"""Seconds for server-everything to start and mount, on a loaded machine."""

RUN: Final = 40.0
"""Seconds for one research task (about 4 s unloaded) to run to its end."""


def stdio_everything(**options: object) -> StdioServer:
    """server-everything over stdio, spoken to in the handshake era (all it speaks)."""
    command, *args = everything_command()
    return StdioServer.model_validate(
        {"command": command, "args": args, "protocol": "legacy"} | options
    )


@asynccontextmanager
async def http_everything(log: Path) -> AsyncGenerator[ServerSpec]:
    """Run server-everything's streamable HTTP mode on a port the OS picks; yield its spec."""
    node, everything, _ = everything_command()
    env = {**os.environ, "PORT": "0"}
    with log.open("w") as errlog:
        process = await anyio.open_process(
            [node, everything, "streamableHttp"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            start_new_session=True,
        )
        record_group(process.pid)
        async with process:
            try:
                with anyio.fail_after(STARTUP):
                    while (port := listening_port(process.pid)) is None:
                        assert process.returncode is None, f"exited; see {log}"
                        await anyio.sleep(0.05)
                url = f"http://127.0.0.1:{port}/mcp"
                yield HttpServer.model_validate({"url": url, "protocol": "legacy"})
            finally:
                process.terminate()
                with anyio.fail_after(10):
                    await process.wait()


def listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on, from its socket inodes in /proc; None
    before it listens."""
    try:
        inodes = {
            os.readlink(f"/proc/{pid}/fd/{fd}")[len("socket:[") : -1]
            for fd in os.listdir(f"/proc/{pid}/fd")
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")
        }
    except OSError:
        return None
    for table in ("/proc/net/tcp6", "/proc/net/tcp"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    return int(fields[1].rsplit(":", 1)[1], 16)
    return None
