"""``transport = "auto"``: streamable HTTP, or legacy SSE for a server that only speaks that.

As the MCP spec's backwards-compatibility section says (2025-03-26 and later), the client
POSTs an ``initialize`` to the URL. A streamable HTTP server answers it; a legacy SSE
server, which takes POSTs only at the endpoint its stream names, refuses it with a 4xx
(405 or 404), and the URL is then opened as an SSE stream. Credentials refused (401, 403),
a server busy (408, 429), or a 4xx that is a JSON-RPC answer are a streamable HTTP server
speaking: they choose streamable HTTP, whose connection then reports them.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable
from importlib.metadata import version

import anyio
import httpx2
from mcp.client import Transport
from mcp.client._transport import TransportStreams
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpmount.config import HttpServer
from mcpmount.transports._base import Diagnostics, ServerTransport
from mcpmount.transports._http import HttpTransport
from mcpmount.transports._http_client import UrlTransport, http_client
from mcpmount.transports._http_metering import Metered
from mcpmount.transports._limits import MessageLimits
from mcpmount.transports._sse import SseTransport

__all__ = ["AutoTransport"]

logger = logging.getLogger(__name__)

_NOT_SSE = frozenset({401, 403, 407, 408, 429})
"""4xx statuses a streamable HTTP server answers too: they say nothing about SSE."""

_SESSION_HEADER = "mcp-session-id"

_BODY_BOUND = 5.0
"""Seconds to read the probe's answer; a server answers initialize at once."""


class AutoTransport(ServerTransport):
    """A URL reached over streamable HTTP, or over legacy SSE if its server answers as one.

    Each connection asks again (a server may have been upgraded), at the cost of one POST,
    and the DELETE of the session a streamable HTTP server opened for it.
    ``diagnostics.transport`` says which was chosen.
    """

    def __init__(
        self, spec: HttpServer, limits: MessageLimits, auth: httpx2.Auth | None = None
    ) -> None:
        super().__init__()
        self._spec = spec
        self._limits = limits
        self._auth = auth
        self._chosen: UrlTransport = self._share(HttpTransport(spec, limits, auth))
        self._refusal: int | None = None
        """The status the streamable HTTP POST got, when SSE was chosen for it."""

    @property
    def close_bound(self) -> float:
        return self._chosen.close_bound

    @property
    def silence_hint(self) -> str:
        return self._chosen.silence_hint

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        return self._connect(on_lost)

    async def wait_failure(self) -> str | None:
        return await self._chosen.wait_failure()

    def describe(self, exc: BaseException, *, starting: bool) -> str:
        message = self._chosen.describe(exc, starting=starting)
        if self._refusal is None or not starting:
            return message
        return f"{message} (over legacy SSE: a streamable HTTP POST got HTTP {self._refusal})"

    @contextlib.asynccontextmanager
    async def _connect(self, on_lost: Callable[[str], None]) -> AsyncGenerator[TransportStreams]:
        url = self._spec.display_url()
        self._refusal = await self._probe()
        if self._refusal is None:
            self.diagnostics.transport = "http"
            logger.info("%s speaks streamable HTTP", url)
        else:
            self._chosen = self._share(SseTransport(self._spec, self._limits, self._auth))
            self.diagnostics.transport = "sse"
            logger.info(
                "%s answered a streamable HTTP POST with HTTP %d; using legacy SSE",
                url,
                self._refusal,
            )
        async with self._chosen.open(on_lost) as streams:
            yield streams

    def _share(self, transport: UrlTransport) -> UrlTransport:
        transport.diagnostics = self.diagnostics
        return transport

    async def _probe(self) -> int | None:
        """POST ``initialize``; return the 4xx status that means SSE, or None.

        Errors (the server cannot be reached) propagate: they are no answer at all.
        """
        request = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "mcpmount", "version": version("mcpmount")},
            },
        }
        headers = {"accept": "application/json, text/event-stream"}
        layers = Metered(httpx2.AsyncHTTPTransport(), self._limits, Diagnostics())
        async with http_client(self._spec, Diagnostics(), layers, self._auth) as http:
            async with http.stream("POST", self._spec.url, json=request, headers=headers) as sent:
                # The status decides; the body only tells a JSON-RPC 4xx. A body refused,
                # or an answer stream left open, is no reason to wait or fail.
                with anyio.move_on_after(_BODY_BOUND), contextlib.suppress(httpx2.StreamError):
                    await sent.aread()
            status = sent.status_code
            if 200 <= status < 300 and (session := sent.headers.get(_SESSION_HEADER)):
                await _end_session(http, self._spec.url, session)
            if 400 <= status < 500 and status not in _NOT_SSE and not _is_json_rpc(sent):
                return status
            return None


async def _end_session(http: httpx2.AsyncClient, url: str, session: str) -> None:
    """DELETE the session the probe opened; a server that refuses keeps it, harmlessly."""
    try:
        ended = await http.delete(url, headers={_SESSION_HEADER: session})
    except httpx2.HTTPError as exc:
        logger.debug("ending the probe's session failed: %s", type(exc).__name__)
        return
    if ended.status_code >= 300:
        logger.debug("ending the probe's session got HTTP %d", ended.status_code)


def _is_json_rpc(response: httpx2.Response) -> bool:
    """Whether ``response`` is a JSON-RPC message: an MCP server's own answer."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return False
    try:
        message: object = json.loads(response.content)
    except (httpx2.ResponseNotRead, ValueError):
        return False
    return isinstance(message, dict) and "jsonrpc" in message
