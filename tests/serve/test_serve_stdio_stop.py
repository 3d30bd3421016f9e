"""`mcpmount serve` over stdio stops cleanly while its client still holds stdin open: on a
stop signal (exit 0) and when a required server fails to mount (exit 1), never with an
interpreter abort."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest

from leaks import record_group
from serve.serve_support import BEHAVIOUR, STARTUP, serve_command, write_config
from support import alive, fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def _wait_for(condition: object, what: str, within: float = STARTUP) -> None:
    deadline = time.monotonic() + within
    while not callable(condition) or not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextmanager
def _serve(config: str, log: Path) -> Generator[subprocess.Popen[bytes]]:
    """Serve over stdio with stdin a pipe this test keeps open (as a client would); on the
    way out, close stdin and kill the process if it still runs."""
    with log.open("w") as errors:
        process = subprocess.Popen(
            [*serve_command(config)[:3], "-v", *serve_command(config)[3:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        yield process
    finally:
        if process.stdin is not None:
            process.stdin.close()
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_with_stdin_open_closes_every_server_and_exits_0(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """The upstream server is reaped first; the process exits 0, without a fatal error."""
    pidfile = tmp_path / "a.pid"
    config = write_config(tmp_path, fixture_server("a", "--pidfile", str(pidfile)))
    log = tmp_path / "serve.log"
    with _serve(config, log) as process:
        _wait_for(lambda: "serving" in log.read_text(), "the mounts")
        pids = [int(line.split()[1]) for line in pidfile.read_text().split("\n") if line]
        for pid in pids:
            record_group(pid)
        process.send_signal(sig)
        code = process.wait(timeout=BEHAVIOUR)
    said = log.read_text()
    assert "Fatal Python error" not in said
    assert code == 0, said
    assert not [pid for pid in pids if alive(pid)]


def test_a_required_server_failing_with_stdin_open_exits_1(tmp_path: Path) -> None:
    """``required = true``: the mount error names the server; exit 1 as the docs promise,
    not an abort."""
    bad = fixture_server("bad", "--crash-on-start", extra="required = true")
    config = write_config(tmp_path, bad)
    log = tmp_path / "serve.log"
    with _serve(config, log) as process:
        code = process.wait(timeout=STARTUP + BEHAVIOUR)
    said = log.read_text()
    assert "Fatal Python error" not in said
    assert code == 1, said
    assert "bad" in said
