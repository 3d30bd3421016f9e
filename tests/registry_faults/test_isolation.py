"""Servers fail one at a time: a server failing to mount leaves its neighbours' calls running.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import anyio
import pytest

from mcpmount.errors import MountError
from mcpmount.registry import Registry
from support import fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")


async def test_a_failing_server_among_three_leaves_the_healthy_calls_running() -> None:
    """Isolation: two healthy servers keep a slow call going while a third fails to mount."""
    async with Registry() as registry:
        await registry.mount("a", fixture())
        await registry.mount("b", fixture())
        record_pids(registry)
        done: list[str] = []

        async def slow(name: str) -> None:
            done.append(text_of(await registry.call(name, {"seconds": 1.0})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow, "a__sleep")
            tg.start_soon(slow, "b__sleep")
            with pytest.raises(MountError):
                await registry.mount_all({"bad": fixture("--crash-on-start")})
        assert len(done) == 2
        assert text_of(await registry.call("b__echo", {"text": "up"})) == "up"
