"""HTTP counterparts of the fixture server's faults, as small ASGI apps served in-process.

Serve one with `http_fixture.serve_http(app)`:

- `StatusApp(401, ...)`: every request gets one fixed answer (401 with `WWW-Authenticate`,
  403, 500, or a 200 `text/html` login page).
- `HangApp()`: accepts every request and never answers, until `release()`.
- `RedirectApp(location)`: 307 to another origin; `StatusApp.requests` counts what reached it.
- `SessionFaults(app)`: wraps a real MCP app. It counts `initialize` requests, can expire the
  live session (`expire()`: its id answers 404, as after a server restart), can refuse every
  later `initialize` (`refuse_initialize`), and can make DELETE hang or answer 405.

A server killed mid-call is the subprocess fixture (`fixture_server.py --http`, tool `crash`).
"""

from __future__ import annotations

import json

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HangApp", "RedirectApp", "SessionFaults", "StatusApp"]

SESSION_HEADER = b"mcp-session-id"


async def _answer(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return body


class StatusApp:
    """Answer every HTTP request with one status, content type and body."""

    def __init__(
        self,
        status: int,
        body: bytes = b"",
        content_type: bytes = b"text/plain",
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = [(b"content-type", content_type), *(headers or [])]
        self.requests = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan: nothing to start
        self.requests += 1
        await _read_body(receive)
        await _answer(send, self.status, self.body, self.headers)


class HangApp:
    """Accept every request and never answer it, until `release()` (then 503)."""

    def __init__(self) -> None:
        self._released = anyio.Event()
        self.requests = 0

    def release(self) -> None:
        self._released.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        await self._released.wait()
        await _answer(send, 503, b"released")


class RedirectApp:
    """Answer every request with a 307 to `location`."""

    def __init__(self, location: str) -> None:
        self.location = location.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await _read_body(receive)
        await _answer(send, 307, b"", [(b"location", self.location)])


class SessionFaults:
    """Wrap an MCP app with session faults; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.initializes = 0
        self.refuse_initialize = False
        self.delete: str | None = None
        """None passes DELETE on; ``"405"`` refuses it; ``"hang"`` never answers it."""
        self._live: set[str] = set()
        self._expired: set[str] = set()
        self._unhang = anyio.Event()

    def expire(self) -> None:
        """Forget every live session: its id answers 404 from now on."""
        self._expired |= self._live
        self._live.clear()

    def release(self) -> None:
        """Let hanging DELETEs end."""
        self._unhang.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        session = headers.get(SESSION_HEADER, b"").decode()
        if session in self._expired:
            await _read_body(receive)
            error = {"code": -32600, "message": "Session not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
            await _answer(send, 404, body, [(b"content-type", b"application/json")])
            return
        if scope["method"] == "DELETE" and self.delete == "405":
            await _answer(send, 405, b"")
            return
        if scope["method"] == "DELETE" and self.delete == "hang":
            await self._unhang.wait()
            await _answer(send, 503, b"")
            return
        body = await _read_body(receive)
        is_initialize = scope["method"] == "POST" and b'"initialize"' in body
        if is_initialize:
            self.initializes += 1
            if self.refuse_initialize:
                await _answer(send, 500, b"initialize refused")
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and is_initialize:
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER:
                        self._live.add(value.decode())
            await send(message)

        await self.app(scope, replay, watch)
