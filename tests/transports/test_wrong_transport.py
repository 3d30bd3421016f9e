"""A legacy SSE endpoint given as streamable HTTP: the error names the fix, and the fix works.

Express (the framework most Node MCP servers use, server-everything's ``sse`` mode among
them) answers a method its route lacks with 404, not 405: streamable HTTP's POST to an
SSE endpoint gets "404". The server here is the SDK's real SSE server behind that same
answer, on 127.0.0.1.
"""

from __future__ import annotations

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from http_fixture import serve_http
from mcpmount.config import HttpServer
from mcpmount.errors import ServerStartError
from mcpmount.registry import Registry
from servers.sse_faults import build_sse_server

pytestmark = pytest.mark.usefixtures("no_leaks")


class ExpressLike:
    """A real SSE app that answers a POST to its ``/sse`` stream as Express does: 404."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "GET" and scope["path"] == "/sse":
            while (await receive()).get("more_body"):
                pass
            body = b"Cannot POST /sse"
            headers = [
                (b"content-type", b"text/html"),
                (b"content-length", str(len(body)).encode()),
            ]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def spec(url: str, transport: str) -> HttpServer:
    return HttpServer.model_validate({"url": url, "transport": transport, "startup_timeout": 10})


async def test_an_sse_endpoint_given_as_streamable_http_is_told_to_set_the_transport() -> None:
    app = ExpressLike(build_sse_server().sse_app())
    async with serve_http(app, path="/sse") as url, Registry() as registry:
        with pytest.raises(ServerStartError) as caught:
            await registry.mount("old", spec(url, "http"))
        message = str(caught.value)
        assert message.startswith(f"server 'old': HTTP 404 from {url}:")
        assert 'set transport = "sse"' in message
        assert '"auto" to find out' in message
        for transport in ("sse", "auto"):  # what the hint says works
            await registry.mount(f"old_{transport}", spec(url, transport))
        assert {"old_sse__echo", "old_auto__echo"} <= {t.name for t in registry.tools()}


async def test_a_wrong_path_is_still_told_to_check_the_path() -> None:
    app = build_sse_server().sse_app()
    async with serve_http(app, path="/sse") as url, Registry() as registry:
        with pytest.raises(ServerStartError, match="check the path in `url`"):
            await registry.mount("old", spec(url.removesuffix("/sse") + "/nothing", "sse"))
