"""A call's arguments and timeout are the caller's: checked before anything is sent, and
the timeout is a deadline for that call whatever the transport is doing."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import anyio
import pytest

from mcpmount.errors import ArgumentsError, CallTimeoutError, ServerCrashedError
from mcpmount.registry import Registry
from support import fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")

_FROZEN_TOOLS = (
    '{"tools": [{"name": "freeze", "inputSchema": {"type": "object"}}, '
    '{"name": "take", "inputSchema": {"type": "object"}}]}'
)


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
    arguments: dict[object, object], where: str, problem: str
) -> None:
    """Nothing is sent; the same server answers the next call, as the same process."""
    async with Registry() as registry:
        await registry.mount("a", fixture(restart="never"))
        record_pids(registry)
        pid = registry.status()[0].pid
        with pytest.raises(ArgumentsError, match=f"'a__echo'.*{where} .*{problem}"):
            await registry.call("a__echo", arguments)  # pyright: ignore[reportArgumentType]
        result = await registry.call("a__echo", {"text": "still here"})
        assert "still here" in text_of(result)
        assert registry.status()[0].pid == pid
        assert registry.status()[0].state == "ready"


@pytest.mark.parametrize("timeout", [0, -1, math.nan])
async def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: float) -> None:
    """Zero, negative and NaN timeouts are the caller's error, said as such."""
    async with Registry() as registry:
        await registry.mount("a", fixture())
        record_pids(registry)
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            await registry.call("a__echo", {"text": "x"}, timeout=timeout)


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
