"""`mcpmount serve` over stdio polls its pipes on the event loop: a call costs no thread hop.

The SDK reads stdin and writes stdout in worker threads, two hops for each message out
and one for each line in; they cost a served call more than everything else it does.
Every MCP client spawns its server with pipes, and those are polled instead.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client

from serve.serve_support import BEHAVIOUR, served_stdio, wait_for_tool, write_config
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

CALLS = 50


def _parent(pid: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("PPid:")).split()[1])


def _switches_beside_main(pid: int) -> int:
    """How often the process's other threads have waited (each thread hop is one)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        if task.name != str(pid):
            status = (task / "status").read_text().splitlines()
            line = next(line for line in status if line.startswith("voluntary_ctxt_switches"))
            total += int(line.split()[1])
    return total


async def _served_pid(client: Client) -> int:
    """The served process: the parent of the fixture server."""
    block = (await client.call_tool("a__pid", {})).content[0]
    assert isinstance(block, mcp_types.TextContent)
    return _parent(block.text)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_calls_over_pipes_hop_no_thread_and_big_answers_arrive_whole(
    tmp_path: Path, mode: str
) -> None:
    """Calls in both eras, one answer far beyond a pipe's buffer: no thread of the served
    process woke for them (the SDK's I/O: about nine a call), and every answer arrived intact."""
    config = write_config(tmp_path, fixture_server("a"))
    async with served_stdio(config, tmp_path, mode=mode) as client:
        await wait_for_tool(client, "a__pid")
        with anyio.fail_after(BEHAVIOUR):
            served = await _served_pid(client)
            before = _switches_beside_main(served)
            for n in range(CALLS):
                echoed = await client.call_tool("a__echo", {"text": f"hello {n}"})
                assert echoed.content == [mcp_types.TextContent(type="text", text=f"hello {n}")]
            woke = _switches_beside_main(served) - before
            big = await client.call_tool("a__big", {"n": 300_000})
        assert big.content == [mcp_types.TextContent(type="text", text="x" * 300_000)]
        assert woke < CALLS, f"other threads woke {woke} times in {CALLS} calls"
