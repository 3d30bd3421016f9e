"""Run ``mcpmount`` as a user runs it: a subprocess, real servers, real exit codes."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping
from pathlib import Path

from support import fixture_server
from support import write_config as write_config

server = fixture_server
"""`support.fixture_server` under the name tests written before it moved import."""


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
