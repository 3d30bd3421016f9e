"""The streamable HTTP transport: the SDK's client over our own httpx2 client."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable

import anyio
import httpx2
from mcp.client import Transport
from mcp.client._transport import TransportStreams  # the (read, write) pair; no public alias
from mcp.client.streamable_http import streamable_http_client

from mcpmount.config import HttpServer
from mcpmount.transports._base import Diagnostics, ServerTransport, short
from mcpmount.transports._limits import MessageLimits, MessageMeter

__all__ = ["HttpTransport"]

logger = logging.getLogger(__name__)

_HTTP_CONNECT_TIMEOUT = 10.0
_CLOSE_BOUND = 3.0
"""How long an HTTP session gets to end (DELETE) before it is cut off."""
_SESSION_HEADER = "mcp-session-id"


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
                headers=self._spec.header_values(),
                timeout=timeout,
                event_hooks={"response": [keep_status]},
                transport=_SessionRenewal(
                    _Metered(httpx2.AsyncHTTPTransport(), self._limits, diagnostics), diagnostics
                ),
            ) as http,
            streamable_http_client(
                self._spec.url, http_client=http, max_sse_event_size=self._limits.max_bytes
            ) as streams,
        ):
            yield streams


class MessageRefused(httpx2.StreamError):
    """A response body broke the message limits; reading it stopped there.

    A stream error, so the SDK fails only the request the body answered (a JSON-RPC
    error carrying this message), and the session stays up.
    """


class _Metered(httpx2.AsyncBaseTransport):
    """Hold every response body to the message limits while it is read.

    An event stream is left alone: its events are held one by one by the SDK's
    ``max_sse_event_size``, and the stream itself may rightly last all session.
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
        kind = response.headers.get("content-type", "").lower()
        if kind.startswith("text/event-stream") or not isinstance(body, httpx2.AsyncByteStream):
            return response
        declared = response.headers.get("content-length", "")
        refused = (
            self._limits.too_large()
            if declared.isdigit() and int(declared) > self._limits.max_bytes
            else None
        )
        stream = _MeteredStream(body, self._limits.meter(), refused, self._diagnostics)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _MeteredStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        meter: MessageMeter,
        refused: str | None,
        diagnostics: Diagnostics,
    ) -> None:
        self._inner = inner
        self._meter = meter
        self._refused = refused
        self._diagnostics = diagnostics

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reason = self._refused
        if reason is None:
            async for chunk in self._inner:
                if (reason := self._meter.feed(chunk)) is not None:
                    break
                yield chunk
        if reason is not None:
            if reason == self._meter.limits.too_many_tools():
                self._diagnostics.refused_list = reason
            raise MessageRefused(f"mcpmount refused the answer: {reason}")

    async def aclose(self) -> None:
        await self._inner.aclose()


def _status_message(status: int, spec: HttpServer) -> str:
    url = spec.display_url()
    match status:
        case 401 | 403:
            return f"HTTP {status} from {url}: the server refused the credentials; check `headers`"
        case 404:
            return f"HTTP 404 from {url}: no MCP endpoint there; check the path in `url`"
        case _:
            return f"HTTP {status} from {url}"


class _SessionRenewal(httpx2.AsyncBaseTransport):
    """Re-initialize an expired session once, then retry the request that found it expired.

    A server that restarted, or dropped an idle session, answers 404 to the old
    ``mcp-session-id``. The SDK then fails every later request ("Session terminated")
    and never re-initializes. This sits under the SDK's HTTP client: it keeps the
    ``initialize`` request it saw, and on such a 404 it replays it, sends
    ``notifications/initialized``, and retries the request with the new id. From then on
    it rewrites the old id, which the SDK keeps sending, to the new one. If the replay
    fails, the request gets a 404 whose JSON-RPC error says the session expired.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport, diagnostics: Diagnostics) -> None:
        self._inner = inner
        self._diagnostics = diagnostics
        self._initialize: httpx2.Request | None = None
        self._current: str | None = None
        self._renamed: dict[str, str] = {}
        self._lock = anyio.Lock()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = request.headers.get(_SESSION_HEADER)
        if sent is not None and sent in self._renamed:
            request.headers[_SESSION_HEADER] = self._renamed[sent]
        if sent is None and request.method == "POST" and _is_initialize(request):
            self._initialize = request
        response = await self._inner.handle_async_request(request)
        if request is self._initialize and response.status_code < 300:
            self._current = response.headers.get(_SESSION_HEADER)
        if response.status_code != 404 or sent is None or request.method != "POST":
            return response
        await response.aclose()
        expired = request.headers[_SESSION_HEADER]
        async with self._lock:
            if expired == self._current:  # else another request renewed it meanwhile
                self._current = await self._renew(request)
                if self._current is not None:
                    self._renamed[expired] = self._current
                    self._renamed[sent] = self._current
        if self._current is None or self._current == expired:
            return _expired_answer()
        request.headers[_SESSION_HEADER] = self._current
        return await self._inner.handle_async_request(_copy(request))

    async def _renew(self, failed: httpx2.Request) -> str | None:
        """Replay ``initialize`` and send ``initialized``; return the new session id."""
        if self._initialize is None:
            return None
        logger.info("HTTP session expired (404); re-initializing once")
        try:
            answer = await self._inner.handle_async_request(_copy(self._initialize))
            try:
                await answer.aread()
            finally:
                await answer.aclose()
            session = answer.headers.get(_SESSION_HEADER)
            if answer.status_code >= 300 or not session:
                return None
            headers = {k: v for k, v in failed.headers.items() if k.lower() != "content-length"}
            headers[_SESSION_HEADER] = session
            body = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
            note = httpx2.Request(
                "POST", failed.url, headers=headers, content=body, extensions=failed.extensions
            )
            done = await self._inner.handle_async_request(note)
            await done.aclose()
            if done.status_code >= 300:
                return None
        except httpx2.HTTPError as exc:
            logger.info("re-initializing the expired HTTP session failed: %s", type(exc).__name__)
            return None
        self._diagnostics.session_renewals += 1
        return session

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_initialize(request: httpx2.Request) -> bool:
    try:
        return json.loads(request.content).get("method") == "initialize"
    except (httpx2.RequestNotRead, ValueError, AttributeError):
        return False


def _copy(request: httpx2.Request) -> httpx2.Request:
    """Return a fresh request with the same method, URL, headers, body and extensions."""
    return httpx2.Request(
        request.method,
        request.url,
        headers=request.headers,
        content=request.content,
        extensions=request.extensions,
    )


def _expired_answer() -> httpx2.Response:
    error = {
        "code": -32600,
        "message": "session expired: the server no longer knows this session (HTTP 404), "
        "and re-initializing it failed",
    }
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    return httpx2.Response(404, headers={"content-type": "application/json"}, content=body)
