"""A call's arguments and timeout are the caller's: checked before anything is sent, and
the timeout is a deadline for that call whatever the transport is doing."""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from leaks import leak_checked, record_group
from mcpmount.config import StdioServer
from mcpmount.errors import (
    ArgumentsError,
    CallTimeoutError,
    ServerCrashedError,
    ServerNotRunningError,
)
from mcpmount.registry import Registry
from mcpmount.upstream import _supervisor
from proc_table import descendants
from support import FIXTURE, alive, fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")

_FROZEN_TOOLS = (
    '{"tools": [{"name": "freeze", "inputSchema": {"type": "object"}}, '
    '{"name": "take", "inputSchema": {"type": "object"}}]}'
)


@pytest.fixture(scope="module", name="shared")
async def shared_fixture() -> AsyncIterator[Registry]:
    """A registry with the fixture server ``a`` (never restarted), started once for the
    module's tests whose calls are refused before anything is sent, and checked for leaks
    when the last of them is done."""
    async with leak_checked(), Registry() as registry:
        await registry.mount("a", fixture(restart="never"))
        record_pids(registry)
        yield registry


@pytest.mark.parametrize(
    ("arguments", "where", "problem"),
    [
        ({"text": "\ud800"}, "text", "lone surrogate"),
        ({"deep": {"list": ["ok", "bad \udfff"]}}, r"deep.list\[1\]", "lone surrogate"),
        ({"\ud800": "key"}, "a key of arguments", "lone surrogate"),
        ({"n": math.nan}, "n", "is nan"),
        ({"n": [math.inf]}, r"n\[0\]", "is inf"),
        ({"n": {1: "x"}}, "n", "not a string"),
    ],
)
async def test_arguments_json_cannot_carry_are_refused_and_the_server_keeps_serving(
    shared: Registry, arguments: dict[object, object], where: str, problem: str
) -> None:
    """Nothing is sent; the same server answers the next call, as the same process."""
    pid = shared.status()[0].pid
    with pytest.raises(ArgumentsError, match=f"'a__echo'.*{where} .*{problem}"):
        await shared.call("a__echo", arguments)  # pyright: ignore[reportArgumentType]
    result = await shared.call("a__echo", {"text": "still here"})
    assert "still here" in text_of(result)
    assert shared.status()[0].pid == pid
    assert shared.status()[0].state == "ready"


async def test_a_short_timeout_ends_on_time_among_longer_calls_in_flight(shared: Registry) -> None:
    """One task keeps every call's deadline and sleeps until the earliest it knows; a call
    whose deadline comes sooner must wake it, and the longer calls must go on untouched."""
    longer: list[str] = []

    async def long_call() -> None:
        longer.append(text_of(await shared.call("a__sleep", {"seconds": 1.5}, timeout=60)))

    waited = math.inf
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(long_call)
        await anyio.sleep(0.1)  # the keeper now sleeps until the first of those deadlines
        began = time.monotonic()
        with pytest.raises(CallTimeoutError, match="'a__sleep'"):
            await shared.call("a__sleep", {"seconds": 30}, timeout=0.3)
        waited = time.monotonic() - began
    assert 0.3 <= waited < 1.3, f"a 0.3 s timeout ended after {waited:.2f} s"
    assert longer == ["slept 1.5"] * 3


@pytest.mark.parametrize("timeout", [0, -1, math.nan])
async def test_a_timeout_that_is_not_a_positive_number_is_refused(
    shared: Registry, timeout: float
) -> None:
    """Zero, negative and NaN timeouts are the caller's error, said as such."""
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        await shared.call("a__echo", {"text": "x"}, timeout=timeout)


async def test_a_timeout_is_a_deadline_even_when_the_server_stops_reading() -> None:
    """A server that stops reading its stdin holds the write of a large request; the call
    still ends at its timeout, and so does a call queued behind it."""
    async with Registry() as registry:
        await registry.mount("frozen", fixture("--raw", "--list-json", _FROZEN_TOOLS))
        record_pids(registry)
        outcomes: dict[str, float] = {}

        async def timed(key: str, name: str, arguments: Mapping[str, object], limit: float) -> None:
            began = time.perf_counter()
            with pytest.raises(CallTimeoutError):
                await registry.call(name, arguments, timeout=limit)
            outcomes[key] = time.perf_counter() - began

        async with anyio.create_task_group() as tg:
            tg.start_soon(timed, "freeze", "frozen__freeze", {"seconds": 20}, 2.0)
            await anyio.sleep(0.3)  # the server now sleeps and reads nothing
            tg.start_soon(timed, "blocked", "frozen__take", {"blob": "x" * 2_000_000}, 2.0)
            await anyio.sleep(0.3)
            tg.start_soon(timed, "queued", "frozen__take", {"small": 1}, 2.0)
        # Generous on a loaded machine, far below the 30 s stdin stall bound.
        assert all(seconds < 8 for seconds in outcomes.values()), outcomes
        assert set(outcomes) == {"freeze", "blocked", "queued"}


async def test_a_call_right_after_a_crash_waits_for_the_restart() -> None:
    """restart = "on-failure": a call made while the dead server's task still winds down
    is answered by the restarted server instead of failing at once."""
    async with Registry() as registry:
        await registry.mount("srv", fixture(restart="on-failure"))
        record_pids(registry)
        with pytest.raises(ServerCrashedError):
            await registry.call("srv__crash", {})
        result = await registry.call("srv__echo", {"text": "back"}, timeout=20)
        record_pids(registry)
        assert text_of(result) == "back"
        assert registry.status()[0].restarts == 1


async def test_a_server_that_gave_up_restarting_is_not_restarted_by_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After its restart attempts fail, a server stays failed: a call fails at once and
    starts nothing (it does not begin another series of restarts)."""
    monkeypatch.setattr(_supervisor, "RESTART_ATTEMPTS", 2)
    starts = tmp_path / "starts"
    # Serves the first time; every later start fails at once. Each start is counted.
    script = f'echo x >> "$0"; [ "$(wc -l < "$0")" -gt 1 ] && exit 3; exec "{sys.executable}" "$1"'
    args = ["-c", script, str(starts), FIXTURE]
    spec = StdioServer(command="sh", args=args, restart="on-failure")
    async with Registry() as registry:
        await registry.mount("once", spec)
        record_pids(registry)
        pid = registry.status()[0].pid
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)

        def gave_up() -> bool:
            return len(starts.read_text().split()) == 3 and registry.status()[0].state == "failed"

        with anyio.fail_after(30):  # two attempts: 0.5 s and 1 s of backoff, two spawns
            while not gave_up():
                await anyio.sleep(0.05)
        began = time.perf_counter()
        with pytest.raises(ServerNotRunningError):
            await registry.call("once__echo", {"text": "x"}, timeout=20)
        assert time.perf_counter() - began < 5
        await anyio.sleep(1.0)  # a restart the call began would have spawned by now
        assert len(starts.read_text().split()) == 3


async def test_arguments_that_hold_themselves_are_refused_not_walked_forever(
    shared: Registry,
) -> None:
    """A list that contains itself is an ArgumentsError, at once."""
    looped: list[object] = []
    looped.append(looped)
    with anyio.fail_after(5), pytest.raises(ArgumentsError, match="nests deeper"):
        await shared.call("a__echo", {"text": looped})


async def test_unmounting_a_server_whose_restart_is_starting_reaps_that_start_too(
    tmp_path: Path,
) -> None:
    """A restart hangs in its startup; closing the server cuts it short and reaps it."""
    starts = tmp_path / "starts"
    # Serves the first time; a later start hangs before it answers. Each start is counted.
    script = (
        'echo $$ >> "$0"; [ "$(wc -l < "$0")" -gt 1 ] && exec sleep 300; '
        f'exec "{sys.executable}" "$1"'
    )
    args = ["-c", script, str(starts), FIXTURE]
    spec = StdioServer(command="sh", args=args, restart="on-failure", startup_timeout=120)
    async with Registry() as registry:
        await registry.mount("slow", spec)
        record_pids(registry)
        pid = registry.status()[0].pid
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)
        with anyio.fail_after(30):
            while len(starts.read_text().split()) < 2:
                await anyio.sleep(0.05)
        restarting = int(starts.read_text().split()[1])
        record_group(restarting)
        began = time.perf_counter()
        await registry.unmount("slow")
        assert time.perf_counter() - began < 15
        assert registry.status() == []
        assert not alive(restarting)


async def test_a_mount_cancelled_as_its_server_is_spawned_ends_what_the_server_started(
    tmp_path: Path,
) -> None:
    """A mount cancelled right after its server's process is forked, while its pipes are
    still being connected, ends the whole process group: the spawn is shielded, so it is
    not the launcher alone that is killed (its children would live on)."""
    started = tmp_path / "started"
    spec = StdioServer(command="sh", args=["-c", 'echo $$ > "$0"; exec sleep 300', str(started)])

    def forked() -> bool:
        return any(str(started) in p.cmdline() for p in descendants(os.getpid()))

    async with Registry() as registry:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def cancel_once_forked() -> None:
                    with anyio.fail_after(30):
                        while not forked():
                            await anyio.lowlevel.checkpoint()  # each turn, before the pipes
                    _hold_the_loop_until(started.exists)  # so the pipes stay unconnected
                    scope.cancel()

                tg.start_soon(cancel_once_forked)
                await registry.mount("spawning", spec)
        assert scope.cancelled_caught
        assert registry.status() == []
    server = int(started.read_text())
    record_group(server)
    assert not alive(server)


def _hold_the_loop_until(done: Callable[[], bool]) -> None:
    """Block the event loop (nothing else runs) until ``done()``, for 30 s at most."""
    deadline = time.monotonic() + 30
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
