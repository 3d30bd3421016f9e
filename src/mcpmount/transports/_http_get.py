"""Streamable HTTP's standalone GET stream, never opened for a server that does not serve it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx2

__all__ = ["NoGetStream"]


class NoGetStream(httpx2.AsyncBaseTransport):
    """Answer the standalone GET stream here, never sending it, with a silent event stream.

    In the handshake era the SDK opens that GET once the session is initialized, for the
    requests and notifications a server sends outside any call, and opens it again when it
    fails or ends. A local refusal (405) would still cost a retry and a log line, and a
    stream that ends a reconnection a second; a stream that stays silent until the session
    closes costs nothing. A GET that resumes a request's own stream (it carries
    ``Last-Event-ID``) still goes to the server.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and "last-event-id" not in request.headers:
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, headers=headers, stream=_Silent(), request=request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Silent(httpx2.AsyncByteStream):
    """A body that sends nothing until it is closed (its reader cancelled)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        await anyio.sleep_forever()
        yield b""  # never reached: it makes this an async generator

    async def aclose(self) -> None:
        pass
