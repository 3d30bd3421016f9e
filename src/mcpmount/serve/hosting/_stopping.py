"""A graceful stop of HTTP ``serve`` that loses no call: drain, close, finish, cut.

uvicorn's own shutdown closes every idle keep-alive connection at once. A proxy that keeps a
pool of connections to the replica (HAProxy's ``http-reuse``) may be sending a request on
one of them at that very moment: the request is lost without an answer, and since it
reached the replica, the proxy may not replay it (a call of a tool not listed as
idempotent); its client sees its connection closed. Closing a keep-alive connection is
only safe right after an answer that says so (``Connection: close``), or once nobody
sends on it any more. So `Stopping` stops in four steps:

1. **Drain** (`Stopping.drain`): ``/readyz`` answers 503 ``stopping`` (the proxy's health
   check takes the replica out) and every answer closes its connection, while requests
   are still served as usual, for up to ``drain`` seconds; sooner once no request (but a
   ``GET``: health checks, listen streams) has come for `_QUIET` seconds, as when the
   proxy no longer sends any, or a lone client is done.
2. **Close** (`Stopping.close`, as uvicorn's shutdown begins): the listener closes (a
   proxy sends a new connection elsewhere: refused, nothing ran), and so do the idle
   connections. A request that still comes on a connection left open is not run: it is
   answered 503 with ``Retry-After`` and a JSON-RPC error saying to send it again.
3. **Finish** (`Stopping.finish`): the calls in flight get up to ``stop_timeout``
   seconds to end.
4. **Cut**: a call still running then is cancelled (the registry tells its upstream
   server) and answered with a JSON-RPC error saying its outcome is unknown, on its own
   stream if its answer was a stream already; never a connection closed in silence.
"""

from __future__ import annotations

import json
import logging
from typing import Final

import anyio
import mcp_types
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpmount.config import ServeSettings
from mcpmount.serve.hosting._bodies import request_id

__all__ = ["Stopping"]

logger = logging.getLogger(__name__)

_BODY_KEPT: Final = 65536
"""Bytes of a request body kept to find its JSON-RPC id should its call be cut."""

_QUIET: Final = 1.0
"""Seconds without a request that end a drain early: longer than the gaps in a proxy's
traffic while it still sends some, as long as a lone client's pause between calls."""

_NOT_RUN: Final = (
    "mcpmount serve is stopping and did not run this request: send it again "
    "(another replica, or this one once restarted, will answer)"
)
_CUT: Final = (
    "mcpmount serve stopped before this request finished ({seconds:g} s after the stop): "
    "its outcome is unknown (a tool call may have acted); check before sending it again"
)


class Stopping:
    """What a graceful stop has reached, and the ASGI middleware that acts on it.

    Args:
        drain: Seconds to keep serving, answering ``/readyz`` 503, before closing.
        stop_timeout: Seconds the calls in flight get to finish once closed.
    """

    def __init__(self, *, drain: float, stop_timeout: float) -> None:
        self.drain_seconds = drain
        self.stop_timeout = stop_timeout
        self.draining = False
        """Set by `drain`: answers close their connections; ``/readyz`` says ``stopping``."""
        self.closed = False
        """Set by `close`: a request that comes is answered 503 without being run."""
        self._running: set[anyio.CancelScope] = set()
        self._asked = anyio.Event()
        """Set (and replaced) whenever a request but a ``GET`` begins."""
        self._idle = anyio.Event()
        self._idle.set()

    @classmethod
    def configured(cls, settings: ServeSettings) -> Stopping:
        """The stop the ``[serve]`` table's ``drain`` and ``stop_timeout`` say."""
        return cls(drain=settings.drain, stop_timeout=settings.stop_timeout)

    def readiness(self) -> str | None:
        """A readiness check (`mcpmount.serve.ops`): failing once stopping."""
        return "stopping: the process received a signal to stop" if self.draining else None

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the stop: each HTTP request counted, closed and refused as above."""

        async def gated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
            elif self.closed:
                await _answer(send, 503, None, _NOT_RUN, retry=True)
            else:
                await self._run(app, scope, receive, send)

        return gated

    async def drain(self) -> None:
        """Step 1: drain for up to ``drain`` seconds, or until quiet for `_QUIET` seconds."""
        self.draining = True
        began = anyio.current_time()
        logger.info("stopping: draining for up to %g s", self.drain_seconds)
        with anyio.move_on_after(self.drain_seconds):
            while True:
                self._asked = anyio.Event()
                with anyio.move_on_after(_QUIET):
                    await self._asked.wait()
                if not self._asked.is_set():
                    break
        logger.info(
            "stopping: drained in %.1f s; %d requests in flight",
            anyio.current_time() - began,
            len(self._running),
        )

    def close(self) -> None:
        """Step 2: from now on a request that comes is answered 503, not run."""
        self.draining = self.closed = True

    async def finish(self) -> None:
        """Steps 3 and 4: wait ``stop_timeout`` seconds for the calls in flight, then cut
        those still running (each answers its client)."""
        with anyio.move_on_after(self.stop_timeout):
            await self._idle.wait()
        if self._running:
            logger.warning(
                "%d requests still running %g s after the stop: cutting them",
                len(self._running),
                self.stop_timeout,
            )
        for scope in self._running:
            scope.cancel()

    async def _run(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()
        started: str | None = None  # the answer's content type, once it has begun
        ended = False

        async def kept() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) < _BODY_KEPT:
                body.extend(message.get("body", b"")[: _BODY_KEPT - len(body)])
            return message

        async def answer(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                started = _content_type(headers)
                if self.draining:
                    headers = [(k, v) for k, v in headers if k.lower() != b"connection"]
                    headers.append((b"connection", b"close"))
                    message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        cut = anyio.CancelScope()
        self._running.add(cut)
        self._idle = anyio.Event() if len(self._running) == 1 else self._idle
        if scope["method"] != "GET":
            self._asked.set()
        try:
            with cut:
                await app(scope, kept, answer)
        finally:
            self._running.discard(cut)
            if not self._running:
                self._idle.set()
        if cut.cancelled_caught and not ended:
            # Bounded and shielded: the stop is under way, and the client may be gone.
            with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                try:
                    await _cut(send, started, request_id(body), self.stop_timeout)
                except OSError:
                    logger.info("a request cut by the stop had no client left to tell")


def _content_type(headers: list[tuple[bytes, bytes]]) -> str:
    for key, value in headers:
        if key.lower() == b"content-type":
            return value.decode("latin-1").lower()
    return ""


def _error(request_id: str | int | None, message: str) -> bytes:
    error = {"code": mcp_types.INTERNAL_ERROR, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


async def _answer(
    send: Send, status: int, request_id: str | int | None, message: str, *, retry: bool
) -> None:
    """A whole answer: a JSON-RPC error at ``status``; ``Connection: close``."""
    headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
    if retry:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": _error(request_id, message)})


async def _cut(send: Send, started: str | None, request_id: str | int | None, after: float) -> None:
    """Answer a request cut by the stop: whole if its answer had not begun, else as the
    last event of its stream (a JSON answer already begun is left to end as it may)."""
    message = _CUT.format(seconds=after)
    if started is None:
        await _answer(send, 200, request_id, message, retry=False)
    elif started.startswith("text/event-stream") and request_id is not None:
        event = b"event: message\ndata: " + _error(request_id, message) + b"\n\n"
        await send({"type": "http.response.body", "body": event})
        await send({"type": "http.response.body", "body": b""})
