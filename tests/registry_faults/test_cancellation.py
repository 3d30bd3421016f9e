"""Cancellation, late closers and the host dying: servers are reaped whatever ends first.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import signal
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from fault_support import read_pids, wait_dead
from leaks import record_group
from mcpmount.config import RegistryConfig
from mcpmount.processes import group_members
from mcpmount.registry import Registry, open_registry
from support import FIXTURE, fixture, record_pids

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


class TestCancel:
    async def test_cancelling_the_host_during_a_call_reaps_everything(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The host's task group is cancelled mid-call; both servers are reaped cleanly."""
        pids: list[int] = []
        config = RegistryConfig.from_servers({"a": fixture(), "b": fixture()})
        with anyio.CancelScope() as reap:  # its deadline is set when the cancel begins
            async with anyio.create_task_group() as host:

                async def agent() -> None:
                    async with open_registry(config) as registry:
                        record_pids(registry)
                        pids.extend(r.pid for r in registry.status() if r.pid is not None)
                        await registry.call("a__sleep", {"seconds": 30})

                host.start_soon(agent)
                with anyio.fail_after(30):  # mounting is not what this test times
                    while len(pids) < 2:
                        await anyio.sleep(0.02)
                await anyio.sleep(0.2)
                # Only the cancel and the reap are timed: well under a second when healthy,
                # so 10 s means a hang even on a loaded machine.
                reap.deadline = anyio.current_time() + 10
                host.cancel_scope.cancel()
        assert not reap.cancelled_caught
        assert all(group_members(pid) == [] for pid in pids)
        assert not [r for r in caplog.records if "different task" in r.getMessage()]

    async def test_cancelling_a_close_still_reaps_the_server(self) -> None:
        """The task closing a stubborn server is cancelled; the reap finishes anyway."""
        async with Registry() as registry:
            close = await registry.mount("stubborn", fixture("--ignore-eof", "--ignore-term"))
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            with anyio.move_on_after(0.3):
                await close()
            with anyio.fail_after(2 + 2 + 2 + 1):
                while group_members(pid):
                    await anyio.sleep(0.05)

    async def test_a_closer_after_the_registry_closed_is_a_no_op(self) -> None:
        """A closer called after the registry closed does nothing and raises nothing."""
        async with Registry() as registry:
            close = await registry.mount("one", fixture())
            record_pids(registry)
            pid = registry.status()[0].pid
        await close()
        await close()
        assert pid is not None
        assert group_members(pid) == []

    async def test_nothing_outlives_a_host_killed_by_sigkill(self, tmp_path: Path) -> None:
        """On host SIGKILL every server dies: one that honours stdin EOF by itself, and one
        that ignores EOF and SIGTERM, with the helper it forked, through the watchdog."""
        polite, rude = tmp_path / "polite", tmp_path / "rude"
        host = textwrap.dedent(
            f"""
            import os, signal, sys, anyio
            from mcpmount.config import RegistryConfig, StdioServer
            from mcpmount.registry import open_registry
            def spec(*flags):
                return StdioServer(command=sys.executable, args=[{FIXTURE!r}, *flags])
            config = RegistryConfig.from_servers({{
                "polite": spec("--pidfile", {str(polite)!r}),
                "rude": spec(
                    "--ignore-eof", "--ignore-term", "--spawn-helper", "--pidfile", {str(rude)!r}
                ),
            }})
            async def main():
                async with open_registry(config):
                    print("up", flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)
            anyio.run(main)
            """
        )
        proc = await anyio.run_process([sys.executable, "-c", host], check=False)
        assert proc.returncode == -signal.SIGKILL
        assert b"up" in proc.stdout
        pids = [*read_pids(polite).values(), *read_pids(rude).values()]
        assert len(pids) == 3
        for pid in pids:
            record_group(pid)
        # The watchdog's grace (2 s) before SIGKILL, plus slack for a loaded machine.
        for pid in pids:
            await wait_dead(pid, 15)

    async def test_a_hung_headers_command_does_not_outlive_a_killed_host(
        self, tmp_path: Path
    ) -> None:
        """A url server's headers_command that hangs is watched like a stdio server: when
        the host dies by SIGKILL mid-mount, the watchdog ends the helper's group."""
        pidfile = tmp_path / "helper"
        helper = (
            f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
        )
        host = textwrap.dedent(
            f"""
            import os, signal, sys, anyio
            from mcpmount.config import HttpServer
            from mcpmount.registry import Registry
            async def main():
                async with Registry() as registry, anyio.create_task_group() as tasks:
                    command = [sys.executable, "-c", {helper!r}]
                    spec = HttpServer(url="http://127.0.0.1:9/mcp", headers_command=command)
                    tasks.start_soon(registry.mount, "corp", spec)
                    while not os.path.exists({str(pidfile)!r}):
                        await anyio.sleep(0.05)
                    await anyio.sleep(0.2)
                    os.kill(os.getpid(), signal.SIGKILL)
            anyio.run(main)
            """
        )
        with anyio.fail_after(40):
            proc = await anyio.run_process([sys.executable, "-c", host], check=False)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        pid = int(pidfile.read_text())
        record_group(pid)
        await wait_dead(pid, 15)
