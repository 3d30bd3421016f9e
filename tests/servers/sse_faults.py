"""Servers for the legacy HTTP+SSE transport and for ``transport = "auto"``, served in-process.

Serve one with `http_fixture.serve_http(app, path="/sse")`:

- `build_sse_server()`: the HTTP fixture server (echo, add, sleep) plus ``big``; its
  ``sse_app()`` is a real SDK SSE server, its ``streamable_http_app()`` a streamable one.
- `Recorder(app)`: wraps a real MCP app; records every request (HTTP method, path and, for
  a POST, its JSON-RPC method) and, once `refuse` is set, answers every POST with that status;
  `drop()` makes the server drop the open GET streams, as when its client went away.
- `Garbage(app)`: wraps a real SSE app; a ``message`` event that is not JSON follows its
  ``endpoint`` event.
- `ShortStream(endpoint=...)`: an event stream that ends at once, or right after its
  ``endpoint`` event once the first message is POSTed: a server whose stream ends.

A server killed mid-call is a subprocess: `serve_process` runs `sse_server.py` (tool ``crash``).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

import anyio
from anyio.abc import Process
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from http_fixture import build_http_fixture_server
from support import portfile_process

__all__ = ["Garbage", "Recorder", "ShortStream", "build_sse_server", "serve_process"]

SSE_SERVER = Path(__file__).parent / "sse_server.py"


def build_sse_server() -> MCPServer:
    """The HTTP fixture server, plus ``big(n)``: n bytes of text from a small request."""
    server = build_http_fixture_server("sse-fixture")

    @server.tool()
    def big(n: int) -> str:
        """Return n bytes of text."""
        return "x" * n

    return server


@contextlib.asynccontextmanager
async def serve_process(tmp_path: Path) -> AsyncGenerator[tuple[str, Process]]:
    """Run `sse_server.py` in its own process group; yield its URL and the process.

    The process is stopped, if still alive, when the block ends.
    """
    portfile = tmp_path / "sse-port"
    command = [sys.executable, str(SSE_SERVER), "--portfile", str(portfile)]
    log = tmp_path / "sse.log"
    async with portfile_process(command, portfile, log, path="/sse", start=20) as served:
        yield served


class _Replay:
    """An ASGI receive that gives a body already read first, then what the client sends."""

    def __init__(self, body: bytes, receive: Receive) -> None:
        self._first: Message | None = {"type": "http.request", "body": body, "more_body": False}
        self._receive = receive

    async def __call__(self) -> Message:
        first, self._first = self._first, None
        return first if first is not None else await self._receive()


class Recorder:
    """Record what reaches a real MCP app; refuse every POST once `refuse` is set."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[tuple[str, str, str | None]] = []
        """(HTTP method, path, JSON-RPC method of a POST or None), in arrival order."""
        self.refuse: int | None = None
        self._dropped = anyio.Event()

    def drop(self) -> None:
        """Make the server drop every GET stream open now (later ones stay)."""
        self._dropped.set()
        self._dropped = anyio.Event()

    def count(self, http_method: str, rpc_method: str | None = None) -> int:
        """How many requests of ``http_method`` (and ``rpc_method``, if given) arrived."""
        return sum(
            1
            for method, _, rpc in self.seen
            if method == http_method and (rpc_method is None or rpc == rpc_method)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            self.seen.append((scope["method"], scope["path"], None))
            await self.app(scope, self._droppable(receive), send)
            return
        body = await Request(scope, receive).body()
        try:
            rpc = json.loads(body).get("method")
        except (ValueError, AttributeError):
            rpc = None
        self.seen.append(("POST", scope["path"], rpc))
        if self.refuse is not None:
            await send({"type": "http.response.start", "status": self.refuse, "headers": []})
            await send({"type": "http.response.body", "body": b"refused"})
            return
        await self.app(scope, _Replay(body, receive), send)

    def _droppable(self, receive: Receive) -> Receive:
        """``receive``, or a disconnect as soon as `drop` is called."""
        dropped = self._dropped

        async def receive_or_drop() -> Message:
            got: list[Message] = []
            async with anyio.create_task_group() as tg:

                async def take(wait: Receive) -> None:
                    got.append(await wait())
                    tg.cancel_scope.cancel()

                async def disconnect() -> Message:
                    await dropped.wait()
                    return {"type": "http.disconnect"}

                tg.start_soon(take, receive)
                tg.start_soon(take, disconnect)
            return got[0]

        return receive_or_drop


class Garbage:
    """A real SSE app whose stream carries a non-JSON ``message`` right after ``endpoint``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return

        async def garbled(message: Message) -> None:
            body: bytes = message.get("body", b"")
            if message["type"] == "http.response.body" and b"event: endpoint" in body:
                message = {**message, "body": body + b"event: message\r\ndata: {not json\r\n\r\n"}
            await send(message)

        await self.app(scope, receive, garbled)


class ShortStream:
    """An SSE server whose stream ends: at once, or after ``endpoint`` and the first POST."""

    def __init__(self, *, endpoint: bool) -> None:
        self.endpoint = endpoint
        self._posted = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":
            await Request(scope, receive).body()
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            self._posted.set()
            return
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if self.endpoint:
            event = b"event: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n"
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await self._posted.wait()
        await send({"type": "http.response.body", "body": b""})
