"""Run ``mcpmount`` as a user runs it: a subprocess, real servers, real exit codes."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import NamedTuple

from support import FIXTURE, SERVERS, portfile_process


def mcpmount(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``mcpmount ARGS`` to its end; ``env`` replaces the environment, ``cwd`` the
    current directory."""
    return subprocess.run(
        [sys.executable, "-m", "mcpmount", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def terminal(*args: str) -> tuple[int, str]:
    """Run ``mcpmount ARGS`` with stdout and stderr on a pseudo-terminal 400 columns wide,
    as a user does; return its exit code and all the terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    received = bytearray()
    command = [sys.executable, "-m", "mcpmount", *args]
    env["TERM"] = "xterm-256color"
    with subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env
    ) as process:
        os.close(follower)
        try:
            while select.select([leader], [], [], 60)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the last writer closed the terminal
                    break
                if not chunk:
                    break
                received += chunk
        finally:
            os.close(leader)
        code = process.wait(timeout=60)
    return code, received.decode()


def environment(home: Path, **extra: str) -> dict[str, str]:
    """This environment with ``home`` as HOME, no XDG_CONFIG_HOME, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPMOUNT_", "XDG_"))}
    return env | {"HOME": str(home)} | extra


def write_json(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))
    return path


class Remotes(NamedTuple):
    """The fixture server's URLs: streamable HTTP, and legacy HTTP+SSE."""

    http: str
    sse: str


@asynccontextmanager
async def remote_servers(folder: Path) -> AsyncGenerator[Remotes]:
    """The fixture server at /mcp (streamable HTTP) and at /sse (SSE), each its own process
    (its port file and log in ``folder``)."""
    http = [sys.executable, FIXTURE, "--http", "--portfile", str(folder / "http.port")]
    sse = [sys.executable, str(SERVERS / "sse_server.py"), "--portfile", str(folder / "sse.port")]
    async with (
        portfile_process(http, folder / "http.port", folder / "http.log") as (http_url, _),
        portfile_process(sse, folder / "sse.port", folder / "sse.log", path="/sse") as (sse_url, _),
    ):
        yield Remotes(http_url, sse_url)
