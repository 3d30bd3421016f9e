"""A call whose client closed its stream and did not come back is cancelled (streamable HTTP).

In the handshake era a session's request is answered on the SSE stream of its POST. A
client may close that stream mid-call and mean to come back (SSE polling: a new request
with ``Last-Event-ID``), so the SDK's transport keeps the call running when the stream
closes: a disconnect is not a cancellation. ``serve`` keeps no event store, so nothing
sent on a closed stream can be replayed, and a client that does not come back (one that
gave up, crashed or lost its network) would leave its call running upstream until the
call's timeout, holding the upstream server and what the call asked of it.

`LeftCalls` bounds that wait, per POST of a request in a session: when its stream closes
before the response was sent, it waits ``window`` seconds, then cancels the call as its
client would, posting ``notifications/cancelled`` for its id into the same session with
the same headers (so the same credentials and the same principal). The front then
cancels the call upstream. A call that ended meanwhile, or a session that ended, makes
that cancellation a no-op. Requests without a session (the 2026-07-28 era,
``--stateless``) pass untouched: their transport ends with the request's stream, and so
does their call.
"""

from __future__ import annotations

import json
import logging
from typing import Final

import anyio
from anyio.abc import TaskGroup
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpmount.serve.hosting._bodies import request_id

__all__ = ["LeftCalls"]

logger = logging.getLogger(__name__)

_SESSION_HEADER: Final = b"mcp-session-id"

_MAX_BODY: Final = 4 * 1024 * 1024
"""Bytes of a POST body kept to find its request id; a larger one is not searched (the
SDK refuses it anyway)."""


class LeftCalls:
    """ASGI middleware: a session's call is cancelled ``window`` seconds after its client
    closed the call's stream, unless it was answered first.

    The waits run beside the app's lifespan, not in the request's own task, so that a
    graceful shutdown never waits for them: they end when the shutdown starts.
    """

    def __init__(self, app: ASGIApp, *, window: float) -> None:
        self.app = app
        self.window = window
        self._waits: TaskGroup | None = None
        self._scopes: set[anyio.CancelScope] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if not _session_post(scope):
            await self.app(scope, receive, send)
            return
        body = bytearray()  # read as the app reads it; searched only if the client left
        answered = False
        closed = False

        async def track(message: Message) -> None:
            nonlocal answered, closed
            try:
                await send(message)
            except OSError:  # the client's connection is gone: it hears nothing more
                closed = True
                raise
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True

        async def listen() -> Message:
            nonlocal closed
            message = await receive()
            if message["type"] == "http.request":
                if len(body) <= _MAX_BODY:
                    body.extend(message.get("body", b""))
            elif message["type"] == "http.disconnect":
                closed = True
            return message

        await self.app(scope, listen, track)
        if closed and not answered and self._waits is not None:
            left = request_id(body) if len(body) <= _MAX_BODY else None
            if left is not None:
                self._waits.start_soon(self._cancel_later, scope, left)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def listen() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                self._waits = None  # stopping: no call waits for its client any more
                for waiting in self._scopes:
                    waiting.cancel()
            return message

        async with anyio.create_task_group() as waits:
            self._waits = waits
            await self.app(scope, listen, send)
            waits.cancel_scope.cancel()

    async def _cancel_later(self, scope: Scope, request_id: str | int) -> None:
        """Wait ``window`` seconds, then post the call's cancellation into its session."""
        with anyio.CancelScope() as waiting:
            self._scopes.add(waiting)
            try:
                await anyio.sleep(self.window)
                logger.info(
                    "a client closed the stream of its call %r and did not come back within "
                    "%g s: cancelling it",
                    request_id,
                    self.window,
                )
                with anyio.move_on_after(self.window):  # a 202 at once; a gone session: 404
                    await self.app(*_cancellation(scope, request_id), _discard)
            finally:
                self._scopes.discard(waiting)


def _cancellation(scope: Scope, request_id: str | int) -> tuple[Scope, Receive]:
    """A POST of the cancellation of ``request_id`` with ``scope``'s headers, and its body."""
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "the client left the call"},
    }
    body = json.dumps(notice).encode()
    headers = [
        (name, value)
        for name, value in scope["headers"]
        if name not in (b"content-length", b"last-event-id")
    ]
    headers.append((b"content-length", str(len(body)).encode()))
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return {**scope, "headers": headers}, receive


async def _discard(message: Message) -> None:
    """Nobody hears the answer to a cancellation."""


def _session_post(scope: Scope) -> bool:
    if scope["type"] != "http" or scope["method"] != "POST":
        return False
    return any(name == _SESSION_HEADER for name, _ in scope["headers"])
