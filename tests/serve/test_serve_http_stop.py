"""A graceful stop of HTTP `mcpmount serve` loses no call: on SIGTERM it drains (keeps
answering, ``/readyz`` 503, every answer closing its connection), then stops accepting,
gives the calls in flight ``stop_timeout`` seconds, and answers a call it cuts with an
error saying its outcome is unknown, never a connection closed in silence."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from serve.serve_support import BEHAVIOUR, connected, served_http, wait_for_tool, write_config
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


@MODES
async def test_after_sigterm_calls_are_still_answered_while_readyz_says_stopping(
    tmp_path: Path, mode: str
) -> None:
    """A proxy that has not yet seen the replica go down loses nothing: for the drain,
    calls (on a connection opened before the signal, and on new ones) are answered, each
    answer closing its connection, and ``/readyz`` answers 503 ``stopping``. Once no call
    comes for a while, serve exits 0."""
    config = write_config(tmp_path, fixture_server("fx"))
    async with (
        served_http(config, tmp_path, "--stateless") as (url, process),
        connected(Client(url, mode=mode, cache=None)) as client,
        httpx2.AsyncClient() as http,
    ):
        await wait_for_tool(client, "fx__add")
        ready = url.removesuffix("/mcp") + "/readyz"
        assert (await http.get(ready)).status_code == 200
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(BEHAVIOUR):
            for i in range(8):  # about 1 s of calls, each well inside the drain's quiet time
                added = await client.call_tool("fx__add", {"a": i, "b": 1})
                assert added.structured_content == {"result": i + 1}
                await anyio.sleep(0.1)
            readyz = await http.get(ready)
            assert readyz.status_code == 503
            assert "stopping" in readyz.text
            answer = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 7, "method": "ping"},
                headers={
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-06-18",
                },
            )
            assert answer.status_code == 200
            assert answer.headers["connection"] == "close"
            assert await process.wait() == 0


@MODES
async def test_a_call_running_past_the_stop_timeout_is_answered_not_dropped(
    tmp_path: Path, mode: str
) -> None:
    """A call still running ``stop_timeout`` seconds after the stop is cut with a JSON-RPC
    error that says its outcome is unknown (in the handshake era, as the last event of its
    stream); a call that ends within the bound gets its result."""
    config = write_config(tmp_path, "[serve]\nstop_timeout = 3\n", fixture_server("fx"))
    outcomes: dict[str, str] = {}

    async def call(client: Client, seconds: float) -> None:
        try:
            result = await client.call_tool("fx__sleep", {"seconds": seconds})
        except MCPError as exc:
            outcomes[f"{seconds:g}"] = exc.error.message
        else:
            outcomes[f"{seconds:g}"] = text_of(result)

    async with (
        served_http(config, tmp_path) as (url, process),
        connected(Client(url, mode=mode)) as client,
    ):
        await wait_for_tool(client, "fx__sleep")
        with anyio.fail_after(BEHAVIOUR):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, client, 60)
                tg.start_soon(call, client, 2)
                await anyio.sleep(1)  # both sent (one coming late still meets the drain)
                process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    assert outcomes["2"] == "slept 2.0"
    assert "outcome is unknown" in outcomes["60"], outcomes
