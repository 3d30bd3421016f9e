"""The HTTP(S) proxy a sandbox with a host allow-list reaches the network through.

It takes one request head per connection: ``CONNECT host:port`` (HTTPS, and anything
tunnelled) opens a tunnel; an absolute-form request (``GET http://host/path``, plain
HTTP) is sent on in origin form. Only hosts on the allow-list are reached (`AllowList`);
any other is answered ``403`` and logged with the server's name. The proxy resolves host
names itself, so the sandbox needs no DNS. It never looks inside a tunnel (no TLS
interception) and adds no header.

It is written here rather than taken from a package: what matters is the allow-list
decision, a few lines, and the proxies at hand each miss the shape needed: a daemon
(tinyproxy) listens on TCP only, reachable by every local process, with a config file per
server; a TLS-intercepting suite (mitmproxy) is far too large for a tunnel; the small
Python ones are unmaintained (pproxy's last release is from 2024).
"""

from __future__ import annotations

import contextlib
import logging
from urllib.parse import urlsplit

import anyio
from anyio.abc import ByteStream, Listener

__all__ = ["AllowList", "serve_proxy"]

logger = logging.getLogger(__name__)

_MAX_HEAD = 16384
"""The longest request head read from the sandbox."""
_HEAD_TIMEOUT = 30.0
_CONNECT_TIMEOUT = 10.0
_CHUNK = 65536


class AllowList:
    """Hosts a sandbox may reach: ``name`` (ports 443 and 80), ``name:port``, ``*.domain``."""

    def __init__(self, entries: tuple[str, ...]) -> None:
        self._entries = entries

    def allows(self, host: str, port: int) -> bool:
        """Return whether ``host:port`` is on the list (names compare without case)."""
        host = host.lower().rstrip(".")
        for entry in self._entries:
            name, _, given = entry.partition(":")
            if port not in ((int(given),) if given else (80, 443)):
                continue
            if host == name or (name.startswith("*.") and host.endswith(name[1:])):
                return True
        return False


async def serve_proxy(listener: Listener[ByteStream], allow: AllowList, server: str) -> None:
    """Serve proxy connections from ``listener`` until cancelled; each in its own task."""

    async def handle(client: ByteStream) -> None:
        async with client:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await _proxy_one(client, allow, server)

    await listener.serve(handle)


async def _proxy_one(client: ByteStream, allow: AllowList, server: str) -> None:
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
        host = host.strip("[]")
    else:
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            await _answer(client, 400, "give an absolute http:// URL, or CONNECT for https")
            return
        host, port_text = url.hostname, str(url.port or 80)
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        head = f"{method} {path} {version}\r\n".encode() + headers
    if not port_text.isdigit() or not allow.allows(host, int(port_text)):
        logger.warning(
            "server %r: its sandbox refused a connection to %s:%s (not in its network list)",
            server,
            host,
            port_text,
        )
        await _answer(client, 403, f"{host}:{port_text} is not in this server's network list")
        return
    try:
        with anyio.fail_after(_CONNECT_TIMEOUT):
            upstream = await anyio.connect_tcp(host, int(port_text))
    except (OSError, TimeoutError) as exc:
        await _answer(client, 502, f"cannot reach {host}:{port_text} ({exc})")
        return
    async with upstream:
        if tunnel:
            await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            await upstream.send(head + b"\r\n\r\n")
        if rest:
            await upstream.send(rest)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump, client, upstream)
            tg.start_soon(_pump, upstream, client)


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


async def _pump(source: ByteStream, sink: ByteStream) -> None:
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        async for chunk in source:
            await sink.send(chunk)
        await sink.send_eof()


async def _answer(client: ByteStream, status: int, reason: str) -> None:
    phrase = {400: "Bad Request", 403: "Forbidden", 431: "Too Large", 502: "Bad Gateway"}
    body = f"mcpmount sandbox: {reason}\n".encode()
    await client.send(
        f"HTTP/1.1 {status} {phrase[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
