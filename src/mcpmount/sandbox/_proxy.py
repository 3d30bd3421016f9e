"""The HTTP(S) proxy a sandbox with a host allow-list reaches the network through.

It takes one request head per connection: ``CONNECT host:port`` (HTTPS, and anything
tunnelled) opens a tunnel; an absolute-form request (``GET http://host/path``, plain
HTTP) is sent on in origin form. Only hosts on the allow-list are reached, and only at
addresses that are public or listed themselves (`resolve`): anything else is answered
``403`` saying why, and logged with the server's name. The proxy resolves host names
itself, so the sandbox needs no DNS. It never looks inside a tunnel (no TLS interception)
and adds no header.

Every connection holds file descriptors of the process that runs the registry, shared by
all its servers: one server opening connections without end would leave none for the
rest. So each server's proxy caps its open connections and the bytes it holds in flight
(`Limits`); past either, new connections are answered ``503`` at once and closed.

It is written here rather than taken from a package: what matters is the allow-list
decision, a few lines, and the proxies at hand each miss the shape needed: a daemon
(tinyproxy) listens on TCP only, reachable by every local process, with a config file per
server; a TLS-intercepting suite (mitmproxy) is far too large for a tunnel; the small
Python ones are unmaintained (pproxy's last release is from 2024).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from anyio.abc import ByteStream, Listener, SocketAttribute

from mcpmount.sandbox._addresses import AllowList, IPAddress, Refused, resolve

__all__ = ["AllowList", "Limits", "serve_proxy"]

logger = logging.getLogger(__name__)

_MAX_HEAD = 16384
"""The longest request head read from the sandbox."""
_HEAD_TIMEOUT = 30.0
_CONNECT_TIMEOUT = 10.0
_ANSWER_TIMEOUT = 5.0
"""How long a refusal may take to send: a client that never reads must not keep its fd."""
_CHUNK = 65536
_ACCEPT_RETRY = 0.1
"""The pause before accepting again after accept failed (out of file descriptors)."""
_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)
"""What a connection whose other side went away raises."""
_PHRASES = {
    400: "Bad Request",
    403: "Forbidden",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class Limits:
    """What one server's proxy may hold at once."""

    max_connections: int = 32
    """Connections open through it (each holds one or two of the registry's fds)."""
    max_buffered_bytes: int = 4 * 1024 * 1024
    """Bytes read from one side and not yet written to the other, over all connections."""


class _Gate:
    """One server's open connections and bytes in flight, against its `Limits`."""

    def __init__(self, server: str, limits: Limits) -> None:
        self._server = server
        self._limits = limits
        self.open = 0
        self.in_flight = 0
        self._drained = anyio.Event()
        self._refused = 0
        """Connections refused in the current burst (logged once, when it starts)."""
        self.starved = False
        """Whether accepting failed since the last connection accepted (logged once)."""

    def admit(self) -> str | None:
        """Count in a new connection, or return why it is refused."""
        limits = self._limits
        if self.open >= limits.max_connections:
            why = f"{self.open} connections are open, its max_connections"
        elif self.in_flight >= limits.max_buffered_bytes:
            why = f"{self.in_flight} bytes are in flight, over its max_buffered_bytes"
        else:
            if self._refused:
                logger.info(
                    "server %r: its sandbox's proxy takes connections again, after refusing %d",
                    self._server,
                    self._refused,
                )
                self._refused = 0
            self.open += 1
            return None
        if not self._refused:
            logger.warning(
                "server %r: its sandbox's proxy refuses new connections: %s; "
                "raise it in the server's sandbox table if it needs more",
                self._server,
                why,
            )
        self._refused += 1
        return why

    def leave(self) -> None:
        self.open -= 1

    async def pump(self, source: ByteStream, sink: ByteStream) -> None:
        """Copy ``source`` to ``sink``; wait, before each read, while too much is in flight.

        The end of ``source`` is passed on (a half close); a failure on either side shuts
        both down, so a side that vanished cannot hold the connection open. (Shut down,
        not cancelled: anyio's unix streams on asyncio may raise ``InvalidStateError``
        from the loop when a pending read or write is cancelled as the socket turns
        ready; a shut-down socket ends them the ordinary way.)
        """
        try:
            while True:
                while self.in_flight >= self._limits.max_buffered_bytes:
                    await self._drained.wait()
                room = self._limits.max_buffered_bytes - self.in_flight
                try:
                    chunk = await source.receive(min(_CHUNK, room))
                except anyio.EndOfStream:
                    await sink.send_eof()
                    return
                self.in_flight += len(chunk)
                try:
                    await sink.send(chunk)
                finally:
                    self.in_flight -= len(chunk)
                    self._drained.set()
                    self._drained = anyio.Event()
        except _GONE:
            for stream in (source, sink):
                with contextlib.suppress(OSError, anyio.TypedAttributeLookupError):
                    stream.extra(SocketAttribute.raw_socket).shutdown(socket.SHUT_RDWR)


async def serve_proxy(
    listener: Listener[ByteStream], allow: AllowList, server: str, limits: Limits
) -> None:
    """Serve proxy connections from ``listener`` until cancelled; each in its own task."""
    gate = _Gate(server, limits)

    async def handle(client: ByteStream) -> None:
        gate.starved = False
        async with client:
            why = gate.admit()
            if why is not None:
                with contextlib.suppress(*_GONE), anyio.move_on_after(_ANSWER_TIMEOUT):
                    await _answer(client, 503, f"server {server!r} may not open more: {why}")
                return
            try:
                with contextlib.suppress(*_GONE):
                    await _proxy_one(client, allow, server, gate)
            finally:
                gate.leave()

    async with anyio.create_task_group() as connections:
        while True:
            try:
                await listener.serve(handle, connections)
            except (OSError, anyio.BrokenResourceError) as exc:
                # Out of file descriptors (shared with every server; anyio raises it as
                # BrokenResourceError): the connection waits in the backlog. Letting the
                # error out would end the server's transport.
                if not gate.starved:
                    logger.warning(
                        "server %r: its sandbox's proxy cannot accept a connection (%s); "
                        "trying again every %.1f s",
                        server,
                        exc.__cause__ or exc,
                        _ACCEPT_RETRY,
                    )
                gate.starved = True
                await anyio.sleep(_ACCEPT_RETRY)


async def _proxy_one(client: ByteStream, allow: AllowList, server: str, gate: _Gate) -> None:
    head = await _read_head(client)
    if head is None:
        return
    head, rest = head
    request_line, _, headers = head.partition(b"\r\n")
    try:
        method, target, version = request_line.decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        await _answer(client, 400, "not an HTTP proxy request")
        return
    tunnel = method.upper() == "CONNECT"
    if tunnel:
        host, _, port_text = target.rpartition(":")
    else:
        try:  # urlsplit and .port raise on a bad bracket or an out-of-range port
            url = urlsplit(target)
            host, port_text = url.hostname or "", str(url.port or 80)
        except ValueError:
            url, host, port_text = None, "", ""
        if url is None or url.scheme != "http" or not host:
            await _answer(client, 400, "give an absolute http:// URL, or CONNECT for https")
            return
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        head = f"{method} {path} {version}\r\n".encode() + headers
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        await _answer(client, 400, "give the host and port to reach, as host:port")
        return
    port = int(port_text)
    try:
        addresses = await resolve(allow, host, port)
    except Refused as exc:
        logger.warning(
            "server %r: its sandbox refused a connection to %s:%s (%s)", server, host, port, exc
        )
        await _answer(client, 403, f"server {server!r} may not reach {host}:{port}: {exc}")
        return
    except OSError as exc:
        await _answer(client, 502, f"cannot resolve {host} ({exc})")
        return
    upstream = await _connect(addresses, port)
    if isinstance(upstream, str):
        await _answer(client, 502, f"cannot reach {host}:{port} ({upstream})")
        return
    async with upstream:
        if tunnel:
            await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            await upstream.send(head + b"\r\n\r\n")
        if rest:
            await upstream.send(rest)
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.pump, client, upstream)
            tg.start_soon(gate.pump, upstream, client)


async def _connect(addresses: list[IPAddress], port: int) -> ByteStream | str:
    """Connect to the first of ``addresses`` that answers (no name, so no second lookup)."""
    error = "no address"
    with anyio.move_on_after(_CONNECT_TIMEOUT):
        for address in addresses:
            try:
                return await anyio.connect_tcp(str(address), port)
            except OSError as exc:
                error = str(exc)
        return error
    return f"no answer in {_CONNECT_TIMEOUT:.0f} s"


async def _read_head(client: ByteStream) -> tuple[bytes, bytes] | None:
    """Return the request head (without its blank line) and what came after it."""
    buffer = b""
    with anyio.move_on_after(_HEAD_TIMEOUT):
        while (end := buffer.find(b"\r\n\r\n")) < 0:
            if len(buffer) > _MAX_HEAD:
                await _answer(client, 431, "request head too large")
                return None
            try:
                buffer += await client.receive(_CHUNK)
            except anyio.EndOfStream:
                return None
        return buffer[:end], buffer[end + 4 :]
    return None


async def _answer(client: ByteStream, status: int, reason: str) -> None:
    body = f"mcpmount sandbox: {reason}\n".encode()
    await client.send(
        f"HTTP/1.1 {status} {_PHRASES[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
