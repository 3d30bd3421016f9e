"""The streamable HTTP transport: the SDK's client over our own httpx2 client."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Callable

import httpx2
from mcp.client import Transport
from mcp.client._transport import TransportStreams  # the (read, write) pair; no public alias
from mcp.client.streamable_http import streamable_http_client

from mcpmount.config import HttpServer
from mcpmount.transports._base import ServerTransport, short
from mcpmount.transports._http_metering import Metered
from mcpmount.transports._http_session import SessionRenewal
from mcpmount.transports._limits import MessageLimits

__all__ = ["HttpTransport"]

logger = logging.getLogger(__name__)

_HTTP_CONNECT_TIMEOUT = 10.0
_CLOSE_BOUND = 3.0
"""How long an HTTP session gets to end (DELETE) before it is cut off."""


class HttpTransport(ServerTransport):
    """A server at a streamable HTTP URL, with the spec's headers on every request."""

    def __init__(self, spec: HttpServer, limits: MessageLimits) -> None:
        super().__init__()
        self._spec = spec
        self._limits = limits

    @property
    def close_bound(self) -> float:
        return _CLOSE_BOUND

    @property
    def silence_hint(self) -> str:
        return f"check that {self._spec.display_url()} is an MCP endpoint and answers"

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        # ``on_lost`` stays unused: a dead HTTP server fails the SDK's own task group,
        # which ends the connection by itself.
        return self._connect()

    def describe(self, exc: BaseException, *, starting: bool) -> str:
        statuses = self.diagnostics.http_statuses
        if statuses:  # the status says more than the exception the SDK made of it
            return _status_message(statuses[-1], self._spec)
        return super().describe(exc, starting=starting)

    def _describe_leaf(self, leaf: BaseException) -> str | None:
        match leaf:
            case httpx2.ConnectError() | httpx2.ConnectTimeout():
                url = self._spec.display_url()
                return f"cannot connect to {url}: {short(leaf)}; is the server running?"
            case httpx2.HTTPError():
                return f"HTTP failure talking to the server: {type(leaf).__name__}: {short(leaf)}"
            case _:
                return None

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncGenerator[TransportStreams]:
        diagnostics = self.diagnostics

        async def keep_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                diagnostics.note_status(response.status_code)

        # No read timeout: a silent tool call may legitimately last long, and the registry
        # bounds every wait itself (startup deadline, call timeout, bounded close).
        timeout = httpx2.Timeout(_HTTP_CONNECT_TIMEOUT, read=None)
        async with (
            httpx2.AsyncClient(
                # identity: a compressed body would be metered before it inflates.
                headers={"accept-encoding": "identity", **self._spec.header_values()},
                timeout=timeout,
                event_hooks={"response": [keep_status]},
                transport=SessionRenewal(
                    Metered(httpx2.AsyncHTTPTransport(), self._limits, diagnostics), diagnostics
                ),
            ) as http,
            streamable_http_client(
                self._spec.url, http_client=http, max_sse_event_size=self._limits.max_bytes
            ) as streams,
        ):
            yield streams


def _status_message(status: int, spec: HttpServer) -> str:
    url = spec.display_url()
    match status:
        case 401 | 403:
            return f"HTTP {status} from {url}: the server refused the credentials; check `headers`"
        case 404:
            return f"HTTP 404 from {url}: no MCP endpoint there; check the path in `url`"
        case _:
            return f"HTTP {status} from {url}"
