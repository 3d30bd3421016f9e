"""Processes a stdio server leaves behind: helpers in its group are swept, escapees ended
(on Linux, by the launcher) or named.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest

from fault_support import read_pids, wait_dead
from leaks import record_group
from mcpmount.config import StdioServer
from mcpmount.errors import ServerCrashedError
from mcpmount.processes import ProcessGroup, group_members
from mcpmount.registry import Registry
from support import FIXTURE, alive, fixture, record_pids

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def sh(command: str, **options: object) -> StdioServer:
    return StdioServer(command="sh", args=["-c", command], **options)  # pyright: ignore[reportArgumentType]


class TestReap:
    @pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "no-pidfd"])
    async def test_a_crash_while_a_helper_holds_stdout_fails_the_call_fast(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
    ) -> None:
        """No EOF comes, but the leader's exit fails the call in < 1 s; the helper is swept.

        Where ``os.pidfd_open`` is missing (macOS), polling notices the exit as fast.
        """
        if not pidfd:
            monkeypatch.delattr(os, "pidfd_open")
        pidfile = tmp_path / "pids"
        async with Registry() as registry:
            await registry.mount("forker", fixture("--spawn-helper", "--pidfile", str(pidfile)))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            began = time.perf_counter()
            with pytest.raises(ServerCrashedError, match="exited with code 3"):
                await registry.call("forker__crash", {})
            assert time.perf_counter() - began < 1.5
            await wait_dead(helper, 3)  # swept by the owner, before any close

    async def test_a_helper_with_closed_stdio_dies_on_close(self, tmp_path: Path) -> None:
        """A helper that holds no pipe is swept from the group too."""
        pidfile = tmp_path / "pids"
        flags = ("--spawn-helper", "--helper-close-fds", "--pidfile", str(pidfile))
        async with Registry() as registry:
            close = await registry.mount("forker", fixture(*flags))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            await close()
            await wait_dead(helper, 3)

    @pytest.mark.parametrize(
        "wrap",
        [
            pytest.param("{cmd}", id="direct"),
            pytest.param("{cmd}; true", id="sh-c"),
            pytest.param("sh -c {quoted}; true", id="sh-c-sh-c"),
        ],
    )
    async def test_a_server_ignoring_eof_behind_wrappers_is_reaped(
        self, tmp_path: Path, wrap: str
    ) -> None:
        """Ignores EOF, directly or under one or two shells: gone after SIGTERM."""
        pidfile = tmp_path / "pids"
        command = shlex.join([sys.executable, FIXTURE, "--ignore-eof", "--pidfile", str(pidfile)])
        wrapped = wrap.format(cmd=command, quoted=shlex.quote(f"{command}; true"))
        async with Registry() as registry:
            close = await registry.mount("wrapped", sh(wrapped))
            record_pids(registry)
            server = read_pids(pidfile)["server"]
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 2 + 2 + 1
            assert not alive(server)

    async def test_a_server_ignoring_eof_and_sigterm_behind_sh_is_killed(
        self, tmp_path: Path
    ) -> None:
        """Sh dies of SIGTERM, the python under it ignores it: SIGKILL to the group."""
        pidfile = tmp_path / "pids"
        command = shlex.join(
            [sys.executable, FIXTURE, "--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)]
        )
        async with Registry() as registry:
            close = await registry.mount("wrapped", sh(f"{command}; true"))
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            server = read_pids(pidfile)["server"]
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 2 + 2 + 2 + 1
            assert not alive(server)
            assert group_members(pid) == []

    async def test_a_helper_that_left_the_group_is_ended_at_close(self, tmp_path: Path) -> None:
        """A setsid helper leaves the group; on Linux the launcher above it ends it anyway."""
        pidfile = tmp_path / "pids"
        flags = ("--spawn-helper", "--helper-setsid", "--helper-close-fds", "--pidfile")
        async with Registry() as registry:
            close = await registry.mount("daemon", fixture(*flags, str(pidfile)))
            record_pids(registry)
            helper = read_pids(pidfile)["helper"]
            record_group(helper)
            assert os.getsid(helper) == helper
            await close()
            await wait_dead(helper, 3)

    async def test_without_the_launcher_a_helper_that_left_the_group_is_named_in_a_warning(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Where there is no launcher (macOS), the setsid helper survives the stop, and the
        warning names the server, the helper's pid and how to end it: never silent."""
        caplog.set_level(logging.WARNING, logger="mcpmount")
        pidfile = tmp_path / "pids"
        argv = [sys.executable, FIXTURE, "--spawn-helper", "--helper-setsid", "--helper-close-fds"]
        group = await ProcessGroup.spawn(
            [*argv, "--pidfile", str(pidfile)],
            env=os.environ,
            cwd=None,
            on_reaped=lambda _: None,
            label="server 'daemon'",
            launcher=False,
        )
        record_group(group.pid)
        try:
            with anyio.fail_after(30):
                while not pidfile.exists() or "helper" not in pidfile.read_text():
                    await anyio.sleep(0.02)
            helper = read_pids(pidfile)["helper"]
            record_group(helper)
        finally:
            await group.stop()
            await group.close_pipes()
        try:
            assert alive(helper)
            assert any(
                f"server 'daemon' (pid {group.pid}) left pid {helper} running" in r.getMessage()
                and f"kill {helper}" in r.getMessage()
                for r in caplog.records
            )
        finally:
            os.kill(helper, signal.SIGKILL)
            await wait_dead(helper, 3)
