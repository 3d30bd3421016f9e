"""A sandboxed server is reaped like any other: on close, and by the watchdog when the host dies.

bwrap runs in the server's process group, so the group stop and sweep reach it; what the
server forked, even into a session of its own, dies with the sandbox's PID namespace. The
``no_leaks`` fixture proves nothing is left, whatever pid namespace it ran in.
"""

from __future__ import annotations

import signal
import sys
import textwrap
import time

import anyio
import pytest

from fault_support import wait_dead
from leaks import record_group
from mcpmount.processes import group_members
from mcpmount.registry import Registry
from support import FIXTURE, fixture

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]

RUDE = ("--ignore-eof", "--ignore-term", "--spawn-helper", "--helper-setsid", "--helper-close-fds")
"""A server that ignores stdin EOF and SIGTERM, with a helper in a session of its own."""


async def test_closing_a_rude_sandboxed_server_ends_it_and_its_escaped_helper() -> None:
    """The helper left the group, yet nothing outlives the close (``no_leaks``)."""
    async with Registry() as registry:
        close = await registry.mount("rude", fixture(*RUDE, sandbox=True))
        pid = registry.status()[0].pid
        assert pid is not None
        record_group(pid)
        began = time.perf_counter()
        await close()
        assert time.perf_counter() - began < 2 + 2 + 2 + 1
        assert group_members(pid) == []


async def test_nothing_sandboxed_outlives_a_host_killed_by_sigkill() -> None:
    """The watchdog (and bwrap's ``--die-with-parent``) end a sandbox whose host was killed."""
    host = textwrap.dedent(
        f"""
        import os, signal, sys, anyio
        from mcpmount.config import StdioServer
        from mcpmount.registry import Registry
        async def main():
            async with Registry() as registry:
                spec = StdioServer(
                    command=sys.executable, args=[{FIXTURE!r}, *{RUDE!r}], sandbox=True
                )
                await registry.mount("rude", spec)
                print(registry.status()[0].pid, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
        anyio.run(main)
        """
    )
    proc = await anyio.run_process([sys.executable, "-c", host], check=False)
    assert proc.returncode == -signal.SIGKILL
    pid = int(proc.stdout)
    record_group(pid)
    await wait_dead(pid, 15)  # the watchdog's grace (2 s), plus slack for a loaded machine
    with anyio.fail_after(15):
        while group_members(pid):
            await anyio.sleep(0.05)
