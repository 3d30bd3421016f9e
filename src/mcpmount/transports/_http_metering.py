"""HTTP response bodies held to the message limits while they are read."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx2

from mcpmount.transports._base import Diagnostics
from mcpmount.transports._limits import MessageLimits, MessageMeter, Refusal

__all__ = ["MessageRefused", "Metered"]

_EVENT_END = re.compile(rb"\r?\n\r?\n")
"""A blank line ends a server-sent event (servers write LF or CRLF line ends)."""


class MessageRefused(httpx2.StreamError):
    """A response body broke the message limits; reading it stopped there.

    A stream error, so the SDK fails only the request the body answered (a JSON-RPC
    error carrying this message), and the session stays up.
    """


class Metered(httpx2.AsyncBaseTransport):
    """Hold every response body to the message limits while it is read.

    A JSON body is one message. An event stream may rightly last all session, so each
    of its events is a message (the SDK also caps an event at ``max_sse_event_size``).
    A body still compressed although identity was asked for is refused: it could not be
    metered before it inflates.
    """

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, limits: MessageLimits, diagnostics: Diagnostics
    ) -> None:
        self._inner = inner
        self._limits = limits
        self._diagnostics = diagnostics

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        body = response.stream
        if not isinstance(body, httpx2.AsyncByteStream):
            return response
        refused: Refusal | None = None
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._limits.max_bytes:
            refused = self._limits.too_large()
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding not in ("", "identity"):
            refused = Refusal(f"it sent a {encoding}-compressed answer, which cannot be metered")
        events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        # In place, as httpx2's own client binds a body: a new Response would copy the
        # headers of every answer.
        response.stream = _MeteredStream(
            body, self._limits.meter(), refused, self._diagnostics, events
        )
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _MeteredStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        meter: MessageMeter,
        refused: Refusal | None,
        diagnostics: Diagnostics,
        events: bool,
    ) -> None:
        self._inner = inner
        self._meter = meter
        self._refused = refused
        self._diagnostics = diagnostics
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        refused = self._refused
        if refused is None:
            async for chunk in self._inner:
                if (refused := self._feed(chunk)) is not None:
                    break
                yield chunk
        if refused is not None:
            self._diagnostics.note_refusal(refused)
            raise MessageRefused(f"mcpmount refused the answer: {refused.reason}")

    def _feed(self, chunk: bytes) -> Refusal | None:
        if not self._events:
            return self._meter.feed(chunk)
        *ended, rest = _EVENT_END.split(chunk)
        for part in ended:  # each ends one event: the next one starts afresh
            if (refused := self._meter.feed(part)) is not None:
                return refused
            self._meter.reset()
        return self._meter.feed(rest)

    async def aclose(self) -> None:
        await self._inner.aclose()
