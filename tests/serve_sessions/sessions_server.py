"""A stateful MCP server: what it holds belongs to the MCP session that set it.

Tools: ``cd(path)`` sets the session's working directory and ``pwd()`` says it (``/``
until set); ``pid()`` says the serving process's pid; ``ask(label, together)`` asks its client a
form question naming ``label`` on the session's standalone stream (a request related to
no request: over streamable HTTP it goes on the GET stream), and returns the answer.

State is keyed by the session (`_session`), so over HTTP (one process, a session per
``Mcp-Session-Id``) as over stdio (a process per session) each session has its own.

Run: ``python sessions_server.py`` (stdio), or ``--http --portfile FILE`` (streamable
HTTP on 127.0.0.1, an OS-chosen port written to FILE once it listens).
"""

from __future__ import annotations

import argparse
import os
import socket
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sessions", version="1.0.0")
cwd: dict[str, str] = {}
"""Each session's working directory, by `_session`."""


def _session(ctx: Context) -> str:
    """The session of ``ctx``: its ``Mcp-Session-Id`` over HTTP; over stdio, the one."""
    headers: Any = ctx.headers or {}
    return str(headers.get("mcp-session-id", "stdio"))


@server.tool()
async def cd(path: str, ctx: Context) -> str:
    """Set this session's working directory."""
    cwd[_session(ctx)] = path
    return path


@server.tool()
async def pwd(ctx: Context) -> str:
    """Say this session's working directory."""
    return cwd.get(_session(ctx), "/")


@server.tool()
async def pid() -> str:
    """Say the pid of the process serving this session."""
    return str(os.getpid())


asking = 0
"""Calls of ``ask`` in flight, in this process."""
answered = 0
"""Questions of ``ask`` answered, in this process."""


@server.tool()
async def ask(label: str, ctx: Context, together: int = 0) -> str:
    """Ask the client a question naming ``label``, related to no request; first wait (at
    most 10 s) until ``together`` calls of ``ask`` are in flight in this process, and
    return once each of them has its answer, so that they overlap throughout."""
    global asking, answered
    asking += 1
    try:
        with anyio.move_on_after(10):
            while asking < together:
                await anyio.sleep(0.02)
        answer = await _ask(label, ctx)
        answered += 1
        with anyio.move_on_after(10):  # and every question is answered while all are open
            while answered % together if together else False:
                await anyio.sleep(0.02)
        return answer
    finally:
        asking -= 1


async def _ask(label: str, ctx: Context) -> str:
    result = await ctx.session.elicit_form(
        f"question for {label}",
        {"type": "object", "properties": {"answer": {"type": "string"}}},
    )
    if result.action != "accept" or result.content is None:
        return f"no answer ({result.action})"
    return str(result.content.get("answer"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--portfile", type=Path)
    args = parser.parse_args()
    if not args.http:
        server.run()
        return
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    if args.portfile is not None:
        partial = args.portfile.with_suffix(".partial")
        partial.write_text(str(sock.getsockname()[1]))
        partial.replace(args.portfile)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
