"""What every transport to a URL shares: its HTTP client, and how its failures read."""

from __future__ import annotations

import httpx2

from mcpmount.auth import LoginRequired
from mcpmount.config import HttpServer
from mcpmount.transports._base import Diagnostics, ServerTransport, leaves, short
from mcpmount.transports._headers_command import CommandHeaders, HeadersCommandError
from mcpmount.transports._limits import MessageLimits

__all__ = ["CONNECT_TIMEOUT", "UrlTransport", "http_client"]

CONNECT_TIMEOUT = 10.0
"""Seconds to connect to the server (each request)."""

_CLOSE_BOUND = 3.0
"""How long an HTTP connection gets to end (a DELETE, the streams closed) before it is cut."""


def http_client(
    spec: HttpServer,
    diagnostics: Diagnostics,
    transport: httpx2.AsyncBaseTransport,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """Return the client for ``spec``'s URL: its headers and ``auth`` on every request, over
    ``transport``.

    Every error status the server answers is kept in ``diagnostics``. There is no read
    timeout: a silent tool call may legitimately last long, and the registry bounds every
    wait itself (startup deadline, call timeout, bounded close).
    """

    async def keep_status(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            diagnostics.note_status(response.status_code)

    return httpx2.AsyncClient(
        # identity: a compressed body would be metered before it inflates.
        headers={"accept-encoding": "identity", **spec.header_values()},
        timeout=httpx2.Timeout(CONNECT_TIMEOUT, read=None),
        event_hooks={"response": [keep_status]},
        transport=transport,
        auth=auth,
    )


class UrlTransport(ServerTransport):
    """A server at a URL: what the HTTP transports share, save how they open."""

    def __init__(
        self, spec: HttpServer, limits: MessageLimits, auth: httpx2.Auth | None = None
    ) -> None:
        super().__init__()
        self._spec = spec
        self._limits = limits
        self._auth = auth

    @property
    def close_bound(self) -> float:
        return _CLOSE_BOUND

    @property
    def silence_hint(self) -> str:
        return f"check that {self._spec.display_url()} is an MCP endpoint and answers"

    async def wait_failure(self) -> str | None:
        failure = await super().wait_failure()
        return failure if failure is not None else self._command_failure()

    def describe(self, exc: BaseException, *, starting: bool) -> str:
        # Failing credentials come first: what follows (a 401, a closed connection) says less.
        for leaf in leaves(exc):
            if isinstance(leaf, LoginRequired | HeadersCommandError):
                return str(leaf)  # what to run, or how the command failed
        if (failure := self._command_failure()) is not None:
            return failure
        statuses = self.diagnostics.http_statuses
        if statuses:  # the status says more than the exception the SDK made of it
            return status_message(statuses[-1], self._spec)
        return super().describe(exc, starting=starting)

    def _command_failure(self) -> str | None:
        """How ``headers_command`` failed for a request whose error the SDK only logged."""
        return self._auth.failure if isinstance(self._auth, CommandHeaders) else None

    def _describe_leaf(self, leaf: BaseException) -> str | None:
        match leaf:
            case httpx2.ConnectError() | httpx2.ConnectTimeout():
                url = self._spec.display_url()
                return f"cannot connect to {url}: {short(leaf)}; is the server running?"
            case httpx2.HTTPError():
                return f"HTTP failure talking to the server: {type(leaf).__name__}: {short(leaf)}"
            case _:
                return None


def status_message(status: int, spec: HttpServer) -> str:
    """Say what an HTTP error status from ``spec``'s URL means."""
    url = spec.display_url()
    match status:
        case 401 if spec.oauth is None and not spec.headers and spec.headers_command is None:
            return (
                f"HTTP 401 from {url}: the server wants authorization; for an OAuth login add "
                "`oauth = true` to its table and run `mcpmount login`, or give a token in `headers`"
            )
        case 401 | 403:
            check = "what `headers_command` prints" if spec.headers_command else "`headers`"
            return f"HTTP {status} from {url}: the server refused the credentials; check {check}"
        case 404 if spec.transport in _OTHER:
            # An Express server of the other transport answers 404 to the method it lacks.
            other = _OTHER[spec.transport]
            return (
                f"HTTP 404 from {url}: no {_NAMES[spec.transport]} endpoint there; check the "
                f"path in `url` (often {_PATHS[spec.transport]}), or, if it speaks "
                f"{_NAMES[other]} (a path often ending in {_PATHS[other]}), set transport = "
                f'"{other}" ("type": "{other}" in a host file), or "auto" to find out'
            )
        case 404:
            return f"HTTP 404 from {url}: no MCP endpoint there; check the path in `url`"
        case 400 | 405 | 406 if spec.transport in _OTHER:
            # What a server of the other HTTP transport answers: a streamable HTTP endpoint
            # refuses SSE's bare GET (400, 405), an SSE endpoint streamable HTTP's POST (405).
            other = _OTHER[spec.transport]
            return (
                f"HTTP {status} from {url}: it may speak {_NAMES[other]}, not "
                f'{_NAMES[spec.transport]}; set transport = "auto" to find out, or '
                f'"{other}" ("type": "{other}" in a host file)'
            )
        case _:
            return f"HTTP {status} from {url}"


_OTHER = {"http": "sse", "sse": "http"}
"""The other HTTP transport of each."""

_NAMES = {"http": "streamable HTTP", "sse": "legacy HTTP+SSE"}

_PATHS = {"http": "/mcp", "sse": "/sse"}
"""Where servers of each transport usually answer."""
