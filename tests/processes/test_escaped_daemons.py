"""Daemons that leave their process group (``setsid`` and a double fork) are ended anyway.

On Linux an unsandboxed server, and a ``before_call`` program, run under mcpmount's
subreaper launcher, so the daemon is re-parented to it instead of to init, and ended when
the server or program ends: closing a registry (the library, the ``mcpmount`` CLI), a
program's exit, and a host killed by SIGKILL (through the watchdog). Each test shows
the same daemon surviving outside mcpmount, so it can fail. Every test requests
``no_leaks``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from fault_support import wait_dead
from leaks import record_group
from mcpmount.registry import Registry
from support import SERVERS, alive, fixture, record_pids, stdio_spec

pytestmark = pytest.mark.usefixtures("no_leaks")

DAEMONIZING = str(SERVERS / "daemonizing_server.py")
GATE = str(SERVERS / "gate_program.py")

ENDED = 10.0
"""Seconds a daemon may take to be gone once what left it has ended (a loaded machine)."""


def daemon_of(pidfile: Path) -> int:
    """The daemon's pid, recorded with the leak checker by its session (it left ours)."""
    pid = int(pidfile.read_text())
    with contextlib.suppress(ProcessLookupError):  # already ended
        record_group(os.getsid(pid))
    return pid


async def outlives_its_parent(pid: int) -> None:
    """The control: the daemon is alive and no child of anything we run; then end it."""
    try:
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
    await wait_dead(pid, ENDED)


@pytest.mark.parametrize("stubborn", [False, True], ids=["polite", "ignores-sigterm"])
async def test_a_daemon_a_server_leaves_is_ended_when_the_registry_closes(
    tmp_path: Path, stubborn: bool
) -> None:
    """The daemon outlives its parent and leaves the server's group and session, yet
    closing the registry ends it; one that ignores SIGTERM is killed."""
    pidfile = tmp_path / "daemon"
    async with Registry() as registry:
        await registry.mount("d", stdio_spec(DAEMONIZING))
        record_pids(registry)
        arguments = {"pidfile": str(pidfile), "stubborn": stubborn}
        result = await registry.call("d__daemonize", arguments)
        daemon = daemon_of(pidfile)
        assert not result.is_error
        assert alive(daemon)
        assert os.getsid(daemon) != os.getsid(registry.status()[0].pid or 0)
    await wait_dead(daemon, ENDED)


async def test_the_same_daemon_outside_mcpmount_survives(tmp_path: Path) -> None:
    """The control: the server's own code, run by itself, leaves a daemon that lives on."""
    pidfile = tmp_path / "daemon"
    done = await anyio.run_process([sys.executable, DAEMONIZING, "--now", str(pidfile)])
    assert done.returncode == 0
    await outlives_its_parent(daemon_of(pidfile))


async def test_a_daemon_a_server_leaves_is_ended_when_mcpmount_call_exits(
    tmp_path: Path,
) -> None:
    """``mcpmount call`` as a user runs it: the daemon its server left is gone with it."""
    pidfile = tmp_path / "daemon"
    config = tmp_path / "mcpmount.toml"
    command, args = json.dumps(sys.executable), json.dumps([DAEMONIZING])
    config.write_text(f"[servers.d]\ncommand = {command}\nargs = {args}\n")
    arguments = json.dumps({"pidfile": str(pidfile), "stubborn": True})
    cli = [sys.executable, "-m", "mcpmount", "call", "d__daemonize", arguments, str(config)]
    with anyio.fail_after(60):
        done = await anyio.run_process(cli, check=False)
    assert done.returncode == 0, done.stderr
    await wait_dead(daemon_of(pidfile), ENDED)


async def test_a_daemon_a_before_call_program_leaves_is_ended_with_the_program(
    tmp_path: Path,
) -> None:
    """The program allows the call and exits, its daemon is ended before the call goes on."""
    spec = fixture(before_call=[sys.executable, GATE, str(tmp_path)])
    async with Registry() as registry:
        await registry.mount("gated", spec)
        record_pids(registry)
        result = await registry.call("gated__echo", {"text": "daemon"})
        assert not result.is_error
        daemon = daemon_of(tmp_path / "daemon")
        await wait_dead(daemon, ENDED)


async def test_the_same_before_call_daemon_outside_mcpmount_survives(tmp_path: Path) -> None:
    """The control: the program run by hand leaves its daemon alive."""
    call = json.dumps({"arguments": {"text": "daemon"}}).encode()
    done = await anyio.run_process([sys.executable, GATE, str(tmp_path)], input=call)
    assert done.returncode == 0
    await outlives_its_parent(daemon_of(tmp_path / "daemon"))


async def test_a_daemon_does_not_outlive_a_host_killed_by_sigkill(tmp_path: Path) -> None:
    """The host dies by SIGKILL with a server that ignores stdin EOF (a shell waiting after
    it) and a daemon that ignores SIGTERM: the watchdog ends the launcher's group, and the
    launcher the daemon."""
    pidfile = tmp_path / "daemon"
    command = f"{sys.executable} {DAEMONIZING}; sleep 60"
    host = textwrap.dedent(
        f"""
        import os, signal, anyio
        from mcpmount.config import StdioServer
        from mcpmount.registry import Registry
        async def main():
            async with Registry() as registry:
                await registry.mount("d", StdioServer(command="sh", args=["-c", {command!r}]))
                print(registry.status()[0].pid, flush=True)
                arguments = {{"pidfile": {str(pidfile)!r}, "stubborn": True}}
                await registry.call("d__daemonize", arguments)
                os.kill(os.getpid(), signal.SIGKILL)
        anyio.run(main)
        """
    )
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-c", host], check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    record_group(int(done.stdout.split()[0]))
    daemon = daemon_of(pidfile)
    await wait_dead(daemon, 15)
