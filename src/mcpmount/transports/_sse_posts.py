"""The messages a legacy SSE client POSTs: each bounded in time, a failure never silent.

The SDK's SSE client sends one message at a time, and the first POST that fails ends its
sender for good (it logs the error and sends nothing more), so every later call would
wait out its timeout. This layer, under the SDK's HTTP client, answers it instead: a
request the server refused gets the refusal as its JSON-RPC error, and a server that can
no longer be reached, or no longer knows the session (404), cuts the connection with that
reason. The SDK always sees its message accepted (202), so its sender stays up.

With ``headers_command``, a first 401 is handed up to be sent again with new headers, and
a request that will not be is answered here unsent (``_headers_command.RENEWAL``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import cast

import httpx2
import mcp_types

from mcpmount.config import HttpServer
from mcpmount.transports._base import short
from mcpmount.transports._headers_command import OFFERED, RENEWAL, GivenUp
from mcpmount.transports._http_client import CONNECT_TIMEOUT

__all__ = ["Posts"]

logger = logging.getLogger(__name__)

_POST_TIMEOUT = httpx2.Timeout(30.0, connect=CONNECT_TIMEOUT)
"""A message is accepted (202) at once, its answer comes on the stream; 30 s is generous."""


class Posts(httpx2.AsyncBaseTransport):
    """Bound each POST in time and turn its failure into an answer or a cut connection."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        spec: HttpServer,
        *,
        cut: Callable[[str], None],
        answer: Callable[[mcp_types.RequestId, int, str], Awaitable[None]],
    ) -> None:
        self._inner = inner
        self._url = spec.display_url()
        self._cut = cut
        self._answer = answer

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":
            return await self._inner.handle_async_request(request)
        renewal = request.extensions.get(RENEWAL)
        if isinstance(renewal, GivenUp):  # refused with 401 already, and not sent again
            if renewal.failure is not None:
                self._cut(renewal.failure)
            else:
                await self._refused(request, 401)
            return _accepted(request)
        request.extensions = {**request.extensions, "timeout": _POST_TIMEOUT.as_dict()}
        try:
            response = await self._inner.handle_async_request(request)
            if response.status_code < 400:
                return response
            try:
                await response.aread()
            finally:
                await response.aclose()
        except (httpx2.HTTPError, httpx2.StreamError) as exc:  # StreamError: a refused body
            self._cut(
                f"a message could not be sent to {self._url}: {type(exc).__name__}: {short(exc)}"
            )
            return _accepted(request)
        if response.status_code == 401 and renewal == OFFERED:
            return httpx2.Response(401, request=request, extensions={RENEWAL: OFFERED})
        await self._refused(request, response.status_code)
        return _accepted(request)

    async def _refused(self, request: httpx2.Request, status: int) -> None:
        """Answer the request ``request`` refused with ``status``, or cut the connection."""
        request_id = _request_id(request)
        if status == 404:
            self._cut("the server no longer knows this SSE session (HTTP 404 for a message)")
        elif request_id is not None:
            message = f"the server refused the request: HTTP {status} from {self._url}"
            await self._answer(request_id, mcp_types.INTERNAL_ERROR, message)
        else:
            logger.warning("%s refused a message: HTTP %d", self._url, status)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _request_id(request: httpx2.Request) -> mcp_types.RequestId | None:
    """The JSON-RPC id of the request ``request`` carries; None for anything else."""
    try:
        message: object = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    request_id = cast("dict[str, object]", message).get("id")
    return request_id if isinstance(request_id, str | int) else None


def _accepted(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(202, request=request)
