"""``serve`` started by hand on a terminal says, in one line on stderr, what it is and how to
stop it, instead of waiting in silence; started by a host (stdin a pipe) it says nothing."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def first_stderr_line(stdin: int, config: str, *flags: str) -> str:
    """Start ``serve CONFIG`` with ``stdin``; return its first stderr line within 30 s ("" if
    none), then stop it."""
    command = [sys.executable, "-m", "mcpmount", "serve", config, *flags]
    with subprocess.Popen(
        command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stderr is not None
        try:
            line = b""
            deadline = time.monotonic() + 30
            while not line.endswith(b"\n") and time.monotonic() < deadline:
                if not select.select([process.stderr], [], [], 0.5)[0]:
                    continue
                chunk = os.read(process.stderr.fileno(), 1)
                if not chunk:
                    break
                line += chunk
        finally:
            process.terminate()
            process.communicate(timeout=30)
    return line.decode()


def test_serve_on_a_terminal_says_what_it_is_and_how_to_stop(tmp_path: Path) -> None:
    config = write_config(tmp_path, fixture_server("one"))
    leader, follower = pty.openpty()
    try:
        said = first_stderr_line(follower, config)
    finally:
        os.close(follower)
        os.close(leader)
    assert "MCP server on stdin/stdout" in said
    assert "for a host" in said
    assert "mcpmount install" in said
    assert "Ctrl-C stops it" in said
    assert said.count("\n") == 1


INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}\n'
)


def test_serve_started_by_a_host_says_nothing(tmp_path: Path) -> None:
    """stdin a pipe, as a host starts it: once it has answered ``initialize`` (the note
    comes before serving), stderr holds no note."""
    config = write_config(tmp_path, fixture_server("one"))
    command = [sys.executable, "-m", "mcpmount", "serve", config]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(INITIALIZE)
            process.stdin.flush()
            assert select.select([process.stdout], [], [], 30)[0]
            assert b'"id":1' in process.stdout.readline().replace(b" ", b"")
        finally:
            _, stderr = process.communicate(timeout=30)  # stdin's EOF stops serve
    assert b"stdin/stdout" not in stderr
