"""The loopback end of a browser login: ``http://127.0.0.1:PORT/callback``.

The authorization server sends the browser back to it with ``code`` and ``state`` (or
``error``). It listens on 127.0.0.1 only, answers one callback and nothing else, and reads
no more than a request line and its headers.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import AuthorizationCodeResult

__all__ = ["Callback", "callback_listener"]

_MAX_REQUEST = 16 * 1024
_READ_TIMEOUT = 10.0

_PAGE = (
    "<!doctype html><meta charset=utf-8><title>mcpmount</title>"
    "<p>{message}</p><p>You can close this tab.</p>"
)


class Callback:
    """Where the browser comes back to; `wait` returns what it brought."""

    def __init__(self, port: int) -> None:
        self.uri = f"http://127.0.0.1:{port}/callback"
        self._done = anyio.Event()
        self._result: AuthorizationCodeResult | None = None
        self._error: str | None = None
        self.issuer: str | None = None
        """The ``iss`` the browser brought back (RFC 9207), with a code or an error."""

    async def wait(self) -> AuthorizationCodeResult:
        """Wait for the browser (the caller bounds how long).

        Raises:
            OAuthFlowError: The authorization server sent an error instead of a code.
        """
        await self._done.wait()
        if self._result is None:
            raise OAuthFlowError(f"the authorization server refused the login: {self._error}")
        return self._result

    async def serve(self, stream: SocketStream) -> None:
        async with stream:
            with anyio.move_on_after(_READ_TIMEOUT):
                head = await _read_head(stream)
                status, message = self._take(head)
                page = _PAGE.format(message=message).encode()
                await stream.send(
                    f"HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n"
                    f"content-length: {len(page)}\r\nconnection: close\r\n\r\n".encode()
                    + page
                )

    def _take(self, head: bytes) -> tuple[str, str]:
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
        if target is None or target.path != "/callback" or self._done.is_set():
            return "404 Not Found", "Nothing to see here."
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        self.issuer = query.get("iss")
        if "code" in query:
            self._result = AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")
            )
            message = "Logged in. mcpmount has the authorization."
        else:
            # error and error_description are the server's words, never a secret.
            described = query.get("error_description") or query.get("error") or "no code"
            self._error = described[:300]
            message = "The login did not succeed; see mcpmount's output."
        self._done.set()
        return "200 OK", message


async def _read_head(stream: SocketStream) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _MAX_REQUEST:
        try:
            head += await stream.receive(4096)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
    return head


@contextlib.asynccontextmanager
async def callback_listener(port: int = 0) -> AsyncGenerator[Callback]:
    """Listen on ``127.0.0.1:port`` (0: a free port) for the browser's return.

    Raises:
        OSError: The port is taken.
    """
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    async with listener, anyio.create_task_group() as tasks:
        bound = listener.extra(anyio.abc.SocketAttribute.local_port)
        callback = Callback(bound)
        tasks.start_soon(listener.serve, callback.serve)
        try:
            yield callback
        finally:
            tasks.cancel_scope.cancel()
