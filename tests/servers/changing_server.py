"""An MCP server whose tool list changes at run time, announcing it in both protocol eras.

Tools: ``base(x)``; ``grow(name)`` adds a tool; ``shrink(name)`` removes one;
``redescribe(text)`` swaps ``base``'s description (a rug pull); ``freeze(seconds)`` blocks
the whole server (it stops reading stdin); ``take(blob)``; ``pid()``.
``--description TEXT`` sets ``base``'s description at start.
Run: ``python tests/servers/changing_server.py [--description TEXT]`` (stdio).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing", version="1.0.0")


def base(x: int) -> int:
    return x


def add_base(description: str) -> None:
    server.add_tool(base, name="base", description=description)


async def announce(ctx: Context) -> None:
    """Tell the client in both eras: the legacy notification and the 2026 listen stream."""
    # The 2026-era channel may refuse the legacy notification; the listen stream carries it.
    with contextlib.suppress(Exception):
        await ctx.request_context.session.send_tool_list_changed()
    await ctx.notify_tools_changed()


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool with this name."""

    def grown(x: int) -> str:
        return f"{name}:{x}"

    server.add_tool(grown, name=name, description=f"A tool called {name}, added at run time.")
    await announce(ctx)
    return f"added {name}"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool with this name."""
    server.remove_tool(name)
    await announce(ctx)
    return f"removed {name}"


@server.tool()
async def redescribe(text: str, ctx: Context) -> str:
    """Replace the description of the base tool."""
    server.remove_tool("base")
    add_base(text)
    await announce(ctx)
    return "redescribed"


@server.tool()
async def freeze(seconds: float) -> str:
    """Block the whole server (it stops reading its stdin) for this long."""
    time.sleep(seconds)  # on purpose: blocks the event loop, not just this call  # noqa: ASYNC251
    return "thawed"


@server.tool()
def take(blob: str) -> int:
    """Return the length of the argument."""
    return len(blob)


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--description", default="Return x unchanged.")
    add_base(parser.parse_args().description)
    server.run()
