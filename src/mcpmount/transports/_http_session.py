"""An expired streamable HTTP session, renewed under the SDK's HTTP client."""

from __future__ import annotations

import json
import logging

import anyio
import httpx2

from mcpmount.transports._base import Diagnostics

__all__ = ["SessionRenewal"]

logger = logging.getLogger(__name__)

_SESSION_HEADER = "mcp-session-id"


class SessionRenewal(httpx2.AsyncBaseTransport):
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
        except (httpx2.HTTPError, httpx2.StreamError) as exc:  # StreamError: a refused body
            logger.info("re-initializing the expired HTTP session failed: %s", type(exc).__name__)
            return None
        self._diagnostics.session_renewals += 1
        return session

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_initialize(request: httpx2.Request) -> bool:
    """Whether ``request`` is the handshake's ``initialize`` (parsed only if it may be: in
    the 2026-07-28 era no request carries a session, and every call would be parsed)."""
    try:
        if b'"initialize"' not in request.content:
            return False
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
