"""A hostile server cannot make the host use more than a small multiple of the limits:
messages are held to ``max_message_bytes`` while they are read, on every transport, and a
message defining more than ``max_tools`` tools is refused before it is parsed."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fault_support import raw
from http_fixture import build_http_fixture_server, serve_http
from mcpmount.config import HttpServer
from mcpmount.errors import ServerStartError, ToolListError
from mcpmount.registry import Registry

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

_MB = 1024 * 1024


@contextmanager
def peak_python_memory() -> Generator[list[int]]:
    """Yield a list that holds, afterwards, the peak of traced Python allocations (bytes)."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def _tool(i: int) -> str:
    return json.dumps({"name": f"t{i}", "inputSchema": {"type": "object"}})


async def test_a_stdio_list_of_220000_tools_is_refused_before_it_is_parsed(
    tmp_path: Path,
) -> None:
    """A 12 MB line under max_message_bytes, but 220 times max_tools: refused, unparsed."""
    listing = tmp_path / "list.json"
    listing.write_text('{"tools": [' + ", ".join(_tool(i) for i in range(220_000)) + "]}")
    size = listing.stat().st_size
    with peak_python_memory() as peak:
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 1000 tools \(max_tools\)"):
                await registry.mount("many", raw(str(listing)))
    # Parsed, the list was about 0.9 GB of objects; read and refused, a few line copies.
    assert peak[0] < 5 * size, f"peak {peak[0] / _MB:.0f} MB for a {size / _MB:.0f} MB line"


async def test_a_tool_key_written_with_escapes_cannot_slip_past_the_count(
    tmp_path: Path,
) -> None:
    """``"input\\u0053chema"`` decodes to inputSchema but is not counted as one; the count
    of JSON objects refuses the list all the same, before it is parsed."""
    tool = '{"name": "t%d", "input\\u0053chema": {"type": "object"}}'
    listing = tmp_path / "list.json"
    listing.write_text('{"tools": [' + ", ".join(tool % i for i in range(200_000)) + "]}")
    size = listing.stat().st_size
    with peak_python_memory() as peak:
        async with Registry() as registry:
            with pytest.raises(ToolListError, match="JSON objects"):
                await registry.mount("many", raw(str(listing)))
    assert peak[0] < 5 * size, f"peak {peak[0] / _MB:.0f} MB for a {size / _MB:.0f} MB line"


class _HugeList:
    """A real MCP app, except that ``tools/list`` answers with ``size`` bytes of JSON."""

    def __init__(self, app: ASGIApp, size: int, *, gzip: bool = False) -> None:
        self.app = app
        self.size = size
        self.gzip = gzip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = json.loads(body)
        if request.get("method") != "tools/list":
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay, send)
            return
        headers = [(b"content-type", b"application/json")]
        if self.gzip:  # a small body that would inflate: refused unread
            headers.append((b"content-encoding", b"gzip"))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            body = gzip.compress(b" " * self.size)
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        head = b'{"jsonrpc": "2.0", "id": ' + json.dumps(request["id"]).encode()
        head += b', "result": {"tools": ['
        await send({"type": "http.response.body", "body": head, "more_body": True})
        chunk = (", ".join(_tool(i) for i in range(2000)) + ", ").encode()
        sent = 0
        try:
            while sent < self.size:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += len(chunk)
            await send({"type": "http.response.body", "body": b"]}}", "more_body": False})
        except OSError:
            return  # the client stopped reading


async def test_an_http_answer_is_held_to_max_message_bytes_while_it_is_read() -> None:
    """A 60 MB tools/list answer with max_message_bytes = 1 MB: refused within a few MB."""
    app = _HugeList(build_http_fixture_server().streamable_http_app(), size=60 * _MB)
    async with serve_http(app) as url:
        with peak_python_memory() as peak:
            async with Registry() as registry:
                spec = HttpServer(
                    url=url, protocol="legacy", max_message_bytes=_MB, max_tools=10**6
                )
                with pytest.raises(ServerStartError, match=r"max_message_bytes \(1048576 bytes\)"):
                    await registry.mount("huge", spec)
    assert peak[0] < 16 * _MB, f"peak {peak[0] / _MB:.0f} MB"


async def test_an_http_list_with_too_many_tools_is_refused_as_a_tool_list() -> None:
    """Under max_message_bytes, over max_tools: the same refusal as a list checked whole."""
    app = _HugeList(build_http_fixture_server().streamable_http_app(), size=2 * _MB)
    async with serve_http(app) as url, Registry() as registry:
        with pytest.raises(ToolListError, match=r"more than 1000 tools \(max_tools\)"):
            await registry.mount("many", HttpServer(url=url, protocol="legacy"))


async def test_a_compressed_http_answer_is_refused_before_it_inflates() -> None:
    """Identity is asked for; a body compressed anyway cannot be metered, so it is refused."""
    app = _HugeList(build_http_fixture_server().streamable_http_app(), size=_MB, gzip=True)
    async with serve_http(app) as url, Registry() as registry:
        with pytest.raises(ServerStartError, match="gzip-compressed"):
            await registry.mount("zipped", HttpServer(url=url, protocol="legacy"))
