"""An MCP server whose tools keep busy until they are done or cancelled, and say which.

Each tool runs for ``seconds`` unless its call is cancelled first:
``wait(seconds)`` only sleeps; ``progress(seconds)`` reports progress every 50 ms;
``chatter(seconds)`` logs a message every 50 ms (in the 2026-07-28 era, the SDK sends
only what the request opted in to); ``ask(seconds)`` first asks its client a form
question (in the 2026-07-28 era, as an ``InputRequiredResult`` round: between rounds
nothing runs, so nothing can be cancelled), then sleeps.
``calls()`` returns, as JSON, how many calls of each tool started (``"<tool>"``), were
cancelled (``"<tool> cancelled"``) and finished (``"<tool> finished"``), and how many
questions were answered (``"ask answered"``).
Run: ``python tests/servers/busy_server.py`` (stdio).
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable

import anyio
import mcp_types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("busy", version="1.0.0")
ran: Counter[str] = Counter()

_TICK = 0.05


class Answer(BaseModel):
    answer: str


async def _busy(tool: str, seconds: float, tick: Callable[[int], Awaitable[None]]) -> str:
    """Call ``tick`` every 50 ms for ``seconds``; count how the call ended."""
    try:
        with anyio.move_on_after(seconds):
            for i in itertools.count():
                await tick(i)
                await anyio.sleep(_TICK)
    except anyio.get_cancelled_exc_class():
        ran[f"{tool} cancelled"] += 1
        raise
    ran[f"{tool} finished"] += 1
    return f"{tool}: done"


async def _nothing(i: int) -> None:
    pass


@server.tool()
async def wait(seconds: float) -> str:
    """Sleep ``seconds``."""
    ran["wait"] += 1
    return await _busy("wait", seconds, _nothing)


@server.tool()
async def progress(seconds: float, ctx: Context) -> str:
    """Report progress every 50 ms for ``seconds``."""

    async def tick(i: int) -> None:
        await ctx.report_progress(i + 1, None, f"step {i + 1}")

    ran["progress"] += 1
    return await _busy("progress", seconds, tick)


@server.tool()
async def chatter(seconds: float, ctx: Context) -> str:
    """Log a message every 50 ms for ``seconds``."""

    async def tick(i: int) -> None:
        with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            await ctx.log("info", f"tick {i + 1}", logger_name="busy")  # pyright: ignore[reportDeprecated]

    ran["chatter"] += 1
    return await _busy("chatter", seconds, tick)


@server.tool()
async def ask(seconds: float, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the client "go on?", then sleep ``seconds``."""
    if ctx.protocol_version == "2026-07-28":
        if not (ctx.input_responses or {}).get("go"):
            ran["ask"] += 1
            params = mcp_types.ElicitRequestFormParams(
                message="go on?", requested_schema=Answer.model_json_schema()
            )
            request = mcp_types.ElicitRequest(params=params)
            return mcp_types.InputRequiredResult(input_requests={"go": request})
    else:
        ran["ask"] += 1
        try:
            await ctx.elicit("go on?", Answer)
        except anyio.get_cancelled_exc_class():
            ran["ask cancelled"] += 1
            raise
    ran["ask answered"] += 1
    return await _busy("ask", seconds, _nothing)


@server.tool()
def calls() -> str:
    """How many calls of each tool started, were cancelled and finished, as JSON (see the
    module docstring)."""
    return json.dumps(ran)


if __name__ == "__main__":
    server.run()
