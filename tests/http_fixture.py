"""Serve an MCP ASGI app over real streamable HTTP on 127.0.0.1 with an OS-chosen port."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

__all__ = ["build_http_fixture_server", "serve_http"]


@contextlib.asynccontextmanager
async def serve_http(
    app: ASGIApp, *, path: str = "/mcp", startup_timeout: float = 5.0
) -> AsyncGenerator[str]:
    """Run `app` under uvicorn in a task group of the calling task; yield `http://127.0.0.1:PORT/mcp`.

    `app` is `MCPServer(...).streamable_http_app()` or the low-level `Server.streamable_http_app()`.
    Each app can be served once: its session manager refuses to run twice. Close every Client
    before leaving the block; the server then stops (graceful shutdown capped at 2 s) and the
    block exits with no socket or task left behind.
    """
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        log_config=None,  # leave the test process's logging configuration alone
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(startup_timeout):
                while not server.started:
                    await anyio.sleep(0.01)
            port: int = server.servers[0].sockets[0].getsockname()[1]
            yield f"http://127.0.0.1:{port}{path}"
        finally:
            server.should_exit = True


def build_http_fixture_server(name: str = "http-fixture") -> MCPServer:
    """A small in-process server for HTTP tests: echo, add, sleep.

    Not `fixture_server.build_mcpserver`: that one has ``crash`` (``os._exit``), which
    in-process would end the test run itself.
    """
    server = MCPServer(name, version="0.1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then say so."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    return server
