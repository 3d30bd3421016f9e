"""From a server spec to an SDK transport: the only module that knows httpx2 and stdio details."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from mcp.client._transport import Transport, TransportStreams
from mcp.client.streamable_http import streamable_http_client

from mcpmount.config import HttpServer, RegistrySettings, ServerSpec, StdioServer
from mcpmount.stdio import ProcessHandle, stdio_transport

__all__ = ["TransportState", "open_transport"]

_HTTP_CONNECT_TIMEOUT = 10.0


@dataclass(eq=False)
class TransportState:
    """What a transport learned about its server, for status and error messages."""

    process: ProcessHandle | None = None
    """The stdio server's process, once spawned."""

    http_statuses: list[int] = field(default_factory=list[int])
    """HTTP error statuses (>= 400) the server answered with, newest last (at most 8)."""

    def note_status(self, status: int) -> None:
        """Remember one HTTP error status."""
        self.http_statuses.append(status)
        del self.http_statuses[:-8]


def open_transport(
    spec: ServerSpec,
    settings: RegistrySettings,
    state: TransportState,
    on_exit: Callable[[ProcessHandle], None],
) -> Transport:
    """Return the transport for ``spec``; ``state`` is filled in as it runs."""
    match spec:
        case StdioServer():

            def on_spawn(handle: ProcessHandle) -> None:
                state.process = handle

            return stdio_transport(
                spec.command,
                spec.args,
                env=spec.env_values(),
                cwd=Path(spec.cwd) if spec.cwd is not None else None,
                max_message_bytes=settings.max_message_bytes,
                on_spawn=on_spawn,
                on_exit=on_exit,
            )
        case HttpServer():
            return _http_transport(spec, state)


@contextlib.asynccontextmanager
async def _http_transport(
    spec: HttpServer, state: TransportState
) -> AsyncGenerator[TransportStreams]:
    async def keep_status(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            state.note_status(response.status_code)

    # No read timeout: a silent tool call may legitimately last long, and the registry
    # bounds every wait itself (startup deadline, call timeout, bounded close).
    timeout = httpx2.Timeout(_HTTP_CONNECT_TIMEOUT, read=None)
    async with (
        httpx2.AsyncClient(
            headers=spec.header_values(),
            timeout=timeout,
            event_hooks={"response": [keep_status]},
        ) as http,
        streamable_http_client(spec.url, http_client=http) as streams,
    ):
        yield streams
