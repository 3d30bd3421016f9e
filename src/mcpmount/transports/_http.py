"""The streamable HTTP transport: the SDK's client over our own httpx2 client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable

import httpx2
from mcp.client import Transport
from mcp.client._transport import TransportStreams  # the (read, write) pair; no public alias
from mcp.client.streamable_http import streamable_http_client

from mcpmount.transports._http_client import UrlTransport, http_client
from mcpmount.transports._http_get import NoGetStream
from mcpmount.transports._http_metering import Metered
from mcpmount.transports._http_session import SessionRenewal

__all__ = ["HttpTransport"]


class HttpTransport(UrlTransport):
    """A server at a streamable HTTP URL, with the spec's headers on every request."""

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        # ``on_lost`` stays unused: a dead HTTP server fails the SDK's own task group,
        # which ends the connection by itself.
        return self._connect()

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncGenerator[TransportStreams]:
        diagnostics = self.diagnostics
        layers: httpx2.AsyncBaseTransport = SessionRenewal(
            Metered(httpx2.AsyncHTTPTransport(), self._limits, diagnostics), diagnostics
        )
        if not self._spec.get_stream:
            layers = NoGetStream(layers)
        async with (
            http_client(self._spec, diagnostics, layers, self._auth) as http,
            streamable_http_client(
                self._spec.url, http_client=http, max_sse_event_size=self._limits.max_bytes
            ) as streams,
        ):
            yield streams
