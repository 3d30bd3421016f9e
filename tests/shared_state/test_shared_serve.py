"""Two `mcpmount serve --shared-state` replicas on one Redis: a change one sees reaches both.

Each replica is a real `mcpmount serve --transport http` process with its own upstream
(tests/servers/changing_server.py). A tool grown on replica A's upstream is a change only A
sees; a 2026-07-28 client listening on replica B is told of it through Redis, and so is a
handshake-era client of B (``notifications/tools/list_changed`` on its session).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import cast

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.client.subscriptions import Subscription
from mcp.server.subscriptions import ToolsListChanged

from redis_support import running_redis
from serve.serve_support import (
    BEHAVIOUR,
    changing,
    connected,
    names,
    serve_command,
    served_http,
    wait_for_tool,
    write_config,
)
from serve_ops.ops_support import base_of, probe

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

QUIET = 1.0
"""Seconds without an event after which the mounts' own change notices are past."""


async def drain(events: Subscription) -> None:
    """Take the events already under way (the replicas' mounts) until none comes for a while."""
    while True:
        with anyio.move_on_after(QUIET) as waited:
            await events.__anext__()
        if waited.cancelled_caught:
            return


def replica_dir(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


async def test_a_change_on_one_replica_reaches_the_clients_of_another_in_both_eras(
    tmp_path: Path,
) -> None:
    a_dir, b_dir = replica_dir(tmp_path, "a"), replica_dir(tmp_path, "b")
    # The same file name: both replicas are one deployment (one Redis namespace).
    config_a = write_config(a_dir, changing("live"))
    config_b = write_config(b_dir, changing("live"))
    told = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            told.set()

    async with running_redis() as redis:
        flags = ("--shared-state", redis.url)
        async with (
            served_http(config_a, a_dir, *flags) as (url_a, _),
            served_http(config_b, b_dir, *flags) as (url_b, _),
            connected(Client(url_a, mode="2026-07-28")) as on_a,
            connected(Client(url_b, mode="2026-07-28")) as on_b,
            connected(Client(url_b, mode="legacy", message_handler=on_message)) as legacy_b,
        ):
            await wait_for_tool(on_a, "live__grow")
            await wait_for_tool(on_b, "live__grow")
            await wait_for_tool(legacy_b, "live__grow")
            async with on_b.listen(tools_list_changed=True) as events:
                await drain(events)
                told = anyio.Event()
                with anyio.fail_after(BEHAVIOUR):
                    await on_a.call_tool("live__grow", {"name": "extra"})
                    assert isinstance(await events.__anext__(), ToolsListChanged)
                    await told.wait()
                    assert "live__extra" in names(await on_a.list_tools())
            # B's own upstream never changed: what B's clients heard came from A.
            assert "live__extra" not in names(await on_b.list_tools())


async def test_a_url_that_is_not_redis_stops_serve_with_a_usage_error(tmp_path: Path) -> None:
    """Exit 2 before any server starts; the message names Redis, never the password."""
    config = write_config(tmp_path, changing("live"))
    command = serve_command(config, "--shared-state", "http://user:s3cret@localhost:6379/0")
    with anyio.fail_after(BEHAVIOUR):
        done = await anyio.run_process(command, check=False, stdin=subprocess.DEVNULL)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert "redis" in stderr
    assert "s3cret" not in stderr


async def test_a_replica_whose_redis_is_down_serves_alone_and_says_so(tmp_path: Path) -> None:
    """``/readyz`` answers 200 ``degraded`` (traffic stays), and ``ready`` once Redis is up."""
    config = write_config(tmp_path, changing("live"))
    async with running_redis() as redis:
        await redis.stop()
        async with (
            served_http(config, tmp_path, "--shared-state", redis.url) as (url, _),
            connected(Client(url, mode="2026-07-28")) as client,
        ):
            await wait_for_tool(client, "live__grow")
            status, body = await probe(base_of(url), "/readyz")
            assert status == 200, body
            assert body["status"] == "degraded", body
            degraded = cast("dict[str, str]", body["degraded"])
            assert degraded["redis"].startswith("redis unreachable"), body
            with anyio.fail_after(BEHAVIOUR):
                async with client.listen(tools_list_changed=True) as events:
                    await client.call_tool("live__grow", {"name": "extra"})
                    async for _ in events:
                        if "live__extra" in names(await client.list_tools()):
                            break
            assert "redis unreachable" in (tmp_path / "serve.log").read_text()
            await redis.start()
            with anyio.fail_after(BEHAVIOUR):
                while (await probe(base_of(url), "/readyz"))[1] != {"status": "ready"}:
                    await anyio.sleep(0.1)
