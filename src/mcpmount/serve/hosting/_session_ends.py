"""A session's end waits for what its client posted just before it (streamable HTTP).

The SDK's transport (mcp/server/streamable_http.py, ``_handle_post_request``) answers a
posted notification or response ``202 Accepted`` and only then hands it to the session.
A ``DELETE`` of that session that ends it in between makes the hand-off raise
``ClosedResourceError``: the SDK logs "Error handling POST request" with its traceback,
then answers 500 on the finished response, and uvicorn logs a second traceback. The SDK's
own client does just that when its caller gives up on a call and closes: the
``notifications/cancelled`` (or its error answer to a question still open) and the
``DELETE`` leave together, on two connections.

`SessionEnds` orders them, per ``Mcp-Session-Id``:

- a ``POST`` is pending from its start until it ends, or until it starts any answer but
  202 (a request's stream, which lasts as long as its call: the SDK queued the hand-off
  before that answer starts, and a ``DELETE`` woken by it runs after the hand-off);
- a ``DELETE`` waits until none of its session's POSTs is pending;
- a ``POST`` that comes while a ``DELETE`` of its session runs waits for it; the SDK then
  answers it 404, as for any ended session.

Each wait is bounded (`_WAIT`), so nothing a client sends can hold another request long.
Requests without a session (the 2026-07-28 era, ``--stateless``) pass untouched.

Once a ``DELETE`` ended its session, ``on_end`` is told (``http:<Mcp-Session-Id>``, the
session's `ClientKey` id), so that the upstream sessions of ``per_client`` servers kept
for that client close with it (within `_WAIT`, whatever the client does meanwhile).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Final

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SessionEnds"]

logger = logging.getLogger(__name__)

_WAIT: Final = 5.0
"""Seconds a DELETE waits for its session's pending POSTs, and a POST for a DELETE."""

_SESSION_HEADER: Final = b"mcp-session-id"

_ACCEPTED: Final = HTTPStatus.ACCEPTED.value


class _Session:
    """What one session's POSTs and DELETE wait for."""

    def __init__(self) -> None:
        self.pending = 0
        self.settled = anyio.Event()
        """Set when no POST is pending."""
        self.ended: anyio.Event | None = None
        """While a DELETE runs: set when it is done."""

    @property
    def idle(self) -> bool:
        return self.pending == 0 and self.ended is None


class SessionEnds:
    """ASGI middleware: each session's DELETE after the POSTs its client sent before it."""

    def __init__(
        self, app: ASGIApp, on_end: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self.app = app
        self._sessions: dict[str, _Session] = {}
        self._on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _session_of(scope)
        if key is None:
            await self.app(scope, receive, send)
        elif scope["method"] == "DELETE":
            await self._delete(key, scope, receive, send)
        else:
            await self._post(key, scope, receive, send)

    async def _post(self, key: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.setdefault(key, _Session())
        if session.ended is not None:
            with anyio.move_on_after(_WAIT):
                await session.ended.wait()
            session = self._sessions.setdefault(key, _Session())
        session.pending += 1
        settled = False

        def settle() -> None:
            nonlocal settled
            if not settled:
                settled = True
                session.pending -= 1
                if session.pending == 0:
                    session.settled.set()
                self._forget(key, session)

        async def answer(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.start" and message["status"] != _ACCEPTED:
                settle()  # a request's stream (or a refusal): nothing more to hand off

        try:
            await self.app(scope, receive, answer)
        finally:
            settle()

    async def _delete(self, key: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.setdefault(key, _Session())
        ended = session.ended = anyio.Event()
        try:
            with anyio.move_on_after(_WAIT):
                while session.pending:
                    if session.settled.is_set():
                        session.settled = anyio.Event()
                    await session.settled.wait()
            await self.app(scope, receive, send)
        finally:
            ended.set()
            if session.ended is ended:
                session.ended = None
            self._forget(key, session)
            await self._ended(key)

    async def _ended(self, key: str) -> None:
        """Tell ``on_end`` the session ``key`` ended; bounded, shielded, never raises."""
        if self._on_end is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(_WAIT):
            try:
                await self._on_end(f"http:{key}")
            except Exception as exc:
                logger.warning("closing what session %r kept upstream failed: %r", key, exc)

    def _forget(self, key: str, session: _Session) -> None:
        if session.idle and self._sessions.get(key) is session:
            del self._sessions[key]


def _session_of(scope: Scope) -> str | None:
    """The session a POST or DELETE names, if any."""
    if scope["type"] != "http" or scope["method"] not in ("POST", "DELETE"):
        return None
    for name, value in scope["headers"]:
        if name == _SESSION_HEADER:
            return value.decode("latin-1")
    return None
