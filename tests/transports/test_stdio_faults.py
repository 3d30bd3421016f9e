"""Stdio servers that misbehave while starting or in what they write, one test per fault.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import gc
import logging
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import anyio
import pytest

from fault_support import raw
from mcpmount.config import RegistryConfig, StdioServer
from mcpmount.errors import ServerCrashedError, ServerStartError
from mcpmount.registry import Registry, open_registry
from mcpmount.transports import _stdio_pipes
from proc_table import descendants
from support import FIXTURE, fixture, record_pids, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


class TestStart:
    async def test_a_command_that_is_not_executable_is_named(self, tmp_path: Path) -> None:
        """A file without the execute bit fails at once, naming the command."""
        script = tmp_path / "server.sh"
        script.write_text("#!/bin/sh\n")
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="is not executable") as caught:
                await registry.mount("noexec", StdioServer(command=str(script)))
            assert str(script) in str(caught.value)
            assert registry.mounted_tools() == []

    @pytest.mark.parametrize("attempt", range(5))
    async def test_a_startup_crash_keeps_the_last_line_of_its_traceback(self, attempt: int) -> None:
        """The tail is read after stderr drains, so it ends with the exception, not with
        "Traceback (most recent call last):" alone (a race: repeated to catch it)."""
        script = "import sys\ndef start():\n    raise RuntimeError('bad config')\nstart()\n"
        spec = StdioServer(command=sys.executable, args=["-c", script], startup_timeout=20)
        async with Registry() as registry:
            with pytest.raises(ServerStartError) as caught:
                await registry.mount("crashy", spec)
        message = str(caught.value)
        assert "Traceback (most recent call last):" in message
        assert "RuntimeError: bad config" in message, (attempt, message)

    async def test_a_missing_cwd_is_named(self, tmp_path: Path) -> None:
        """A cwd that does not exist is named as the cause, not the command."""
        missing = str(tmp_path / "gone")
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match=r"cwd .* does not exist"):
                await registry.mount("nocwd", fixture(cwd=missing))
            assert registry.status() == []

    async def test_a_silent_server_ignoring_eof_and_sigterm_fails_within_the_bound(self) -> None:
        """Never answers, ignores EOF and SIGTERM: startup_timeout plus a bounded reap."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match=r"within 1 s.*speaking on stdout"):
                await registry.mount(
                    "mute", fixture("--no-init", "--ignore-eof", "--ignore-term", startup_timeout=1)
                )
            assert time.perf_counter() - began < 1 + 2 + 2 + 2
            assert registry.mounted_tools() == []

    async def test_a_server_that_never_answers_discover_costs_only_the_startup_timeout(
        self,
    ) -> None:
        """The 10 s discover probe is cut at startup_timeout; legacy mode skips it."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match=r"within 1\.5 s"):
                await registry.mount("old", raw("{}", "--no-discover", startup_timeout=1.5))
            assert time.perf_counter() - began < 1.5 + 2
            began = time.perf_counter()
            await registry.mount("legacy", raw('{"tools": []}', "--no-discover", protocol="legacy"))
            record_pids(registry)
            # Far below the 10 s probe; the rest is spawning the server on a busy machine.
            assert time.perf_counter() - began < 5


class TestOutput:
    async def test_garbage_lines_on_stdout_are_skipped_with_few_warnings(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """50 banner lines: the server works; three warnings, not fifty."""
        caplog.set_level(logging.WARNING, logger="mcpmount")
        async with Registry() as registry:
            await registry.mount("chatty", fixture("--garbage", "50"))
            record_pids(registry)
            assert text_of(await registry.call("chatty__echo", {"text": "ok"})) == "ok"
        warnings = [r for r in caplog.records if "non-MCP line" in r.getMessage()]
        assert len(warnings) == 3

    async def test_invalid_utf8_on_stdout_never_hangs(self) -> None:
        """An invalid UTF-8 line is skipped, and calls work."""
        async with Registry() as registry:
            began = time.perf_counter()
            await registry.mount("latin", fixture("--bad-utf8", startup_timeout=10))
            record_pids(registry)
            assert time.perf_counter() - began < 5
            assert text_of(await registry.call("latin__echo", {"text": "ok"})) == "ok"

    async def test_invalid_utf8_inside_an_answer_is_replaced_not_dropped(
        self, tmp_path: Path
    ) -> None:
        """A tool list whose description holds invalid UTF-8 mounts, with U+FFFD."""
        listing = tmp_path / "list.json"
        listing.write_bytes(
            b'{"tools": [{"name": "t", "description": "caf\xe9", '
            b'"inputSchema": {"type": "object"}}]}'
        )
        async with Registry() as registry:
            await registry.mount("latin", raw(str(listing), startup_timeout=3))
            record_pids(registry)
            assert registry.mounted_tools()[0].definition.description == "caf\ufffd"

    @pytest.mark.parametrize("newlines", [True, False], ids=["lines", "one-line"])
    async def test_a_50_mib_stderr_flood_neither_stalls_nor_grows_memory(
        self, newlines: bool
    ) -> None:
        """50 MiB on stderr: the server starts and answers; memory stays flat."""
        flags = ["--stderr-flood", "50"] + ([] if newlines else ["--flood-no-newlines"])
        rss_before = _rss_kib()
        async with Registry() as registry:
            await registry.mount("loud", fixture(*flags, startup_timeout=20))
            record_pids(registry)
            assert text_of(await registry.call("loud__echo", {"text": "ok"})) == "ok"
        assert _rss_kib() - rss_before < 20_000

    async def test_a_64_mib_line_fails_at_max_message_bytes_fast(self) -> None:
        """One 64 MiB line fails its server quickly; a healthy neighbour still mounts."""
        config = RegistryConfig.from_servers(
            {
                "huge": fixture("--huge-line", "64", required=False),
                "fine": fixture(),
            }
        )
        began = time.perf_counter()
        async with open_registry(config) as registry:
            elapsed = time.perf_counter() - began
            record_pids(registry)
            assert "max_message_bytes" in str(registry.failures["huge"])
            assert text_of(await registry.call("fine__echo", {"text": "ok"})) == "ok"
        assert elapsed < 5  # the failure itself: see the next test

    async def test_a_per_server_max_message_bytes_is_enforced(self) -> None:
        """With max_message_bytes = 1 MiB on one server, a 2 MiB line refuses it."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match=r"max_message_bytes \(1048576 bytes\)"):
                await registry.mount("big", fixture("--huge-line", "2", max_message_bytes=2**20))
            assert time.perf_counter() - began < 2 + 2
            assert registry.status() == []


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def test_the_fixture_server_documents_every_flag() -> None:
    """The fault server's --help runs without the SDK and lists the fault flags."""
    out = subprocess.run(
        [sys.executable, FIXTURE, "--help"], capture_output=True, text=True, check=True
    ).stdout
    for flag in ("--raw", "--no-discover", "--echo-env", "--huge-line", "--helper-setsid"):
        assert flag in out


async def test_a_server_that_stops_reading_its_stdin_is_dropped_not_waited_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write that blocks past the stall bound ends the session; calls fail, naming why."""
    monkeypatch.setattr(_stdio_pipes, "_STDIN_STALL", 1.0)
    tools = (
        '{"tools": [{"name": "freeze", "inputSchema": {"type": "object"}}, '
        '{"name": "take", "inputSchema": {"type": "object"}}]}'
    )
    async with Registry() as registry:
        await registry.mount("frozen", fixture("--raw", "--list-json", tools))
        record_pids(registry)

        async def frozen_call() -> None:
            with pytest.raises(ServerCrashedError, match="stopped reading its stdin"):
                await registry.call("frozen__freeze", {"seconds": 30})

        async with anyio.create_task_group() as tg:
            tg.start_soon(frozen_call)
            await anyio.sleep(0.3)  # the server now sleeps and reads nothing
            began = time.perf_counter()
            with pytest.raises(ServerCrashedError, match="stopped reading its stdin"):
                await registry.call("frozen__take", {"blob": "x" * 1_000_000}, timeout=60)
            assert time.perf_counter() - began < 5


async def test_a_server_that_dies_under_a_waiting_write_is_lost_without_a_stray_error() -> None:
    """A server killed while a large request waits on its full stdin pipe: the call fails
    as a crash, and asyncio is left no BrokenPipeError that nobody retrieves (its exception
    handler would report it once the process is collected; the test runner's raises it)."""
    async with Registry() as registry:
        await registry.mount("stopped", fixture())
        record_pids(registry)
        pid = registry.status()[0].pid
        assert pid is not None
        os.killpg(pid, signal.SIGSTOP)  # it reads nothing from now on

        async def kill_once_the_pipe_is_full() -> None:
            with anyio.fail_after(30):
                while not _stdin_full(pid):
                    await anyio.sleep(0.02)
            os.killpg(pid, signal.SIGKILL)

        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_once_the_pipe_is_full)
            with pytest.raises(ServerCrashedError, match="'stopped'"):
                await registry.call("stopped__echo", {"text": "x" * 2_000_000}, timeout=60)
    gc.collect()  # the stdin pipe's close waiter is reported, if at all, when collected


def _stdin_full(leader: int) -> bool:
    """Whether a pipe the server holds is full, which only its stdin can be: the SDK moves
    the wire off fd 0, and under the launcher the server is the leader's child."""
    for pid in [leader, *(p.pid for p in descendants(leader))]:
        with contextlib.suppress(OSError):  # gone meanwhile
            for fd in os.listdir(f"/proc/{pid}/fd"):
                path = f"/proc/{pid}/fd/{fd}"
                if os.readlink(path).startswith("pipe:") and _pipe_full(path):
                    return True
    return False


def _pipe_full(path: str) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        held = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, held)
        return held[0] >= fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(fd)  # a reader left open would keep the pipe from breaking
