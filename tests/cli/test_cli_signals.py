"""Stop signals sent to a real ``mcpmount`` process: every server is closed, nothing is left
running, and the exit code is 128 + the signal, as after Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from leaks import record_group
from support import alive, fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

_WITHIN = 60.0
"""Bound for a process to start and mount on a loaded machine (not the behaviour's)."""


def _wait_for(condition: object, what: str, within: float = _WITHIN) -> None:
    deadline = time.monotonic() + within
    while not callable(condition) or not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _read_pids(pidfile: Path) -> list[int]:
    lines = pidfile.read_text().split("\n") if pidfile.exists() else []
    return [int(line.split()[1]) for line in lines if line.strip()]


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], list[int], Path]:
    """Start ``mcpmount -v ARGS`` on a server that ignores stdin EOF and forks a helper;
    return once the server is mounted, with its pids."""
    pidfile = tmp_path / "pids"
    body = fixture_server("stubborn", "--ignore-eof", "--spawn-helper", "--pidfile", str(pidfile))
    config = write_config(tmp_path, body)
    log = tmp_path / "stderr.log"
    with log.open("w") as errors:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpmount", "-v", *args, config],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
    _wait_for(lambda: len(_read_pids(pidfile)) == 2, "the server and its helper")
    pids = _read_pids(pidfile)
    for pid in pids:
        record_group(pid)
    _wait_for(lambda: "mounted server 'stubborn'" in log.read_text(), "the mount")
    return process, pids, log


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
def test_status_watch_closes_every_server_on_a_stop_signal(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """`status --watch` until a signal: the EOF-ignoring server and its helper are reaped."""
    process, pids, log = _start(tmp_path, "status", "--watch", "1")
    process.send_signal(sig)
    assert process.wait(timeout=30) == code, log.read_text()
    assert not [pid for pid in pids if alive(pid)]
    assert f"{sig.name}: closing every server" in log.read_text()


def test_a_call_in_flight_is_cancelled_and_its_server_reaped_on_sigterm(tmp_path: Path) -> None:
    """`call` of a 60 s tool, then SIGTERM: exit 143 at once, nothing left running."""
    process, pids, log = _start(tmp_path, "call", "stubborn__sleep", '{"seconds": 60}')
    time.sleep(0.5)  # the call is in flight
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 143, log.read_text()
    assert time.monotonic() - began < 20  # the close is bounded, far below the tool's 60 s
    assert not [pid for pid in pids if alive(pid)]


def test_call_with_arguments_json_cannot_carry_exits_2_and_sends_nothing(
    tmp_path: Path,
) -> None:
    """A lone surrogate or NaN in `call` arguments is a usage error naming the argument."""
    config = write_config(tmp_path, fixture_server("a", extra='restart = "never"'))
    for arguments, problem in (('{"text": "\\ud800"}', "lone surrogate"), ('{"x": NaN}', "nan")):
        done = mcpmount("call", "a__echo", arguments, config)
        assert done.returncode == 2, done.stderr
        said = " ".join(done.stderr.split())  # rich wraps long lines
        assert "'a__echo'" in said
        assert problem in said
        assert "Traceback" not in said


def test_nothing_outlives_mcpmount_killed_by_sigkill(tmp_path: Path) -> None:
    """SIGKILL runs no code in mcpmount; its watchdog still ends the server and its helper."""
    process, pids, _ = _start(tmp_path, "status", "--watch", "1")
    process.kill()
    assert process.wait(timeout=30) == -signal.SIGKILL
    _wait_for(lambda: not [pid for pid in pids if alive(pid)], "the servers to die", 15)
