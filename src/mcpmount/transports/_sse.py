"""The legacy HTTP+SSE transport: the SDK's SSE client over our own httpx2 client.

The server's one GET stream carries every message it sends; its first event, ``endpoint``,
names the URL each client message is POSTed to. It is the transport of protocol version
2024-11-05 (deprecated since 2025-03-26), and its servers predate ``server/discover``; one
that ignores a method it does not know would hold that probe until the startup deadline.
So a connection over it always uses the ``initialize`` handshake: the probe of
``protocol = "auto"`` is answered here, as such a server answers it (method not found),
and never sent.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from types import TracebackType
from typing import Self

import anyio
import httpx2
import mcp_types
from mcp.client import Transport
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.client.sse import sse_client
from mcp.shared.message import SessionMessage

from mcpmount.config import HttpServer
from mcpmount.transports._base import Diagnostics, short
from mcpmount.transports._http_client import UrlTransport, http_client
from mcpmount.transports._http_metering import MessageRefused, Metered
from mcpmount.transports._sse_posts import Posts

__all__ = ["SseTransport"]

logger = logging.getLogger(__name__)

_SDK_EVENT_CAP = 1024 * 1024
"""The largest event the SDK's SSE client reads; past it, it fails the whole connection."""


class SseTransport(UrlTransport):
    """A server at a legacy HTTP+SSE URL, with the spec's headers on every request."""

    @property
    def silence_hint(self) -> str:
        url = self._spec.display_url()
        return f"check that {url} is an MCP SSE endpoint and sends its `endpoint` event"

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        return self._connect(on_lost)

    def describe(self, exc: BaseException, *, starting: bool) -> str:
        failure = self.diagnostics.failure
        if failure is not None:  # the transport gave up first; the rest followed from it
            return f"{failure} during startup" if starting else failure
        return super().describe(exc, starting=starting)

    def _describe_leaf(self, leaf: BaseException) -> str | None:
        url = self._spec.display_url()
        match leaf:
            case httpx2.SSEError():
                return f"{url} is not an SSE stream: {short(leaf)}; check `url`"
            case RuntimeError() if "task_status.started" in str(leaf):
                # The SDK waits for ``endpoint`` in a task that ended without it.
                return f"the SSE stream of {url} ended before its `endpoint` event"
            case _:
                return super()._describe_leaf(leaf)

    @contextlib.asynccontextmanager
    async def _connect(self, on_lost: Callable[[str], None]) -> AsyncGenerator[TransportStreams]:
        link = _Link(self._spec, self.diagnostics, on_lost)
        limits = self._limits
        if limits.max_bytes > _SDK_EVENT_CAP:  # refused here first, with its reason named
            bound = "1 MiB, the most the SDK's SSE client reads in one event"
            limits = replace(limits, max_bytes=_SDK_EVENT_CAP, size_bound=bound)
        layers = Posts(
            Metered(httpx2.AsyncHTTPTransport(), limits, self.diagnostics),
            self._spec,
            cut=link.cut,
            answer=link.answer,
        )
        http = http_client(self._spec, self.diagnostics, layers, self._auth)

        def client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            # Ours whatever the SDK asks: its read timeout would end an idle stream.
            return http

        async with (
            link,
            sse_client(self._spec.url, httpx_client_factory=client) as (read, write),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(link.pump, read)
            yield link.inbound, _HandshakeEra(write, link)
            tg.cancel_scope.cancel()


class _Link:
    """One SSE connection's inbound side: what the session reads, and how it is cut.

    The session reads our stream, which `pump` fills from the SDK's. So the transport can
    answer a message itself (`answer`), and end the connection with a reason (`cut`) when
    the server's stream ends or breaks, or a message cannot be delivered.
    """

    def __init__(
        self, spec: HttpServer, diagnostics: Diagnostics, on_lost: Callable[[str], None]
    ) -> None:
        self._url = spec.display_url()
        self._redact = spec.redact
        self._on_lost = on_lost
        self._diagnostics = diagnostics
        self._send, self.inbound = anyio.create_memory_object_stream[SessionMessage | Exception]()
        self._scope = anyio.CancelScope()

    async def pump(self, read: ReadStream[SessionMessage | Exception]) -> None:
        """Hand the server's messages on until its stream ends or breaks, then cut.

        A message that is not JSON-RPC arrives as the exception that parsing it raised,
        and is handed on too: the session skips it, and the stream goes on.
        """
        with self._scope:
            async with self._send:
                async for item in read:
                    if isinstance(item, httpx2.HTTPError | httpx2.StreamError):
                        self.cut(self._broken(item))
                        return
                    await self._send.send(item)
                self.cut(f"the server ended its SSE stream ({self._url})")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._send.close()
        self.inbound.close()

    def cut(self, reason: str) -> None:
        """End the connection: the session reads no more, and ``reason`` says why."""
        if self._diagnostics.failure is None:
            reason = self._redact(reason)  # it may quote the server, or an HTTP error
            self._diagnostics.failure = reason
            logger.info("SSE connection to %s lost: %s", self._url, reason)
            self._on_lost(reason)
        self._scope.cancel()

    async def answer(self, request_id: mcp_types.RequestId, code: int, message: str) -> None:
        """Answer the request ``request_id`` with an error, as if the server had."""
        error = mcp_types.ErrorData(code=code, message=message)
        reply = mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._send.send(SessionMessage(reply))

    def _broken(self, exc: Exception) -> str:
        if isinstance(exc, MessageRefused):
            return str(exc)
        return f"the SSE stream from {self._url} broke: {type(exc).__name__}: {short(exc)}"


class _HandshakeEra:
    """The session's write stream: ``server/discover`` is answered here, never sent."""

    def __init__(self, inner: WriteStream[SessionMessage], link: _Link) -> None:
        self._inner = inner
        self._link = link

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, mcp_types.JSONRPCRequest) and message.method == "server/discover":
            await self._link.answer(
                message.id,
                mcp_types.METHOD_NOT_FOUND,
                "the legacy SSE transport carries only the initialize handshake",
            )
            return
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _HandshakeEra:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()
