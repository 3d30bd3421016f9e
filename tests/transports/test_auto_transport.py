"""``transport = "auto"``: streamable HTTP, or legacy SSE for a server that answers as one.

Every test requests ``no_leaks``.
"""

from __future__ import annotations

import logging

import pytest

from http_fixture import serve_http
from mcpmount.config import HttpServer
from mcpmount.errors import ServerStartError
from mcpmount.registry import Registry
from servers.http_faults import StatusApp
from servers.sse_faults import Recorder, build_sse_server
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def auto(url: str, **fields: object) -> HttpServer:
    return HttpServer.model_validate({"url": url, "transport": "auto", **fields})


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_an_sse_only_server_is_reached_over_sse(
    caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    """Its 405 to the POST of initialize chooses SSE: tools listed and called, in the
    handshake era, and the choice is logged."""
    caplog.set_level(logging.INFO, logger="mcpmount.transports")
    app = Recorder(build_sse_server().sse_app())
    async with serve_http(app, path="/sse") as url, Registry() as registry:
        await registry.mount("old", auto(url, protocol=protocol))
        assert text_of(await registry.call("old__echo", {"text": "hi"})) == "hi"
        assert [row.transport for row in registry.status()] == ["auto (sse)"]
    assert "answered a streamable HTTP POST with HTTP 405; using legacy SSE" in caplog.text
    assert app.seen[0] == ("POST", "/sse", "initialize")  # the probe, refused
    assert app.count("GET") == 1
    assert app.count("POST", "server/discover") == 0


@pytest.mark.parametrize(("protocol", "discovers"), [("auto", 1), ("legacy", 0)])
async def test_a_streamable_server_is_reached_over_streamable_http(
    caplog: pytest.LogCaptureFixture, protocol: str, discovers: int
) -> None:
    """The POST of initialize is answered: streamable HTTP, in the era ``protocol`` asks
    for; the session the probe opened is deleted, and no SSE stream is asked for."""
    caplog.set_level(logging.INFO, logger="mcpmount.transports")
    app = Recorder(build_sse_server().streamable_http_app())
    async with serve_http(app) as url:
        async with Registry() as registry:
            await registry.mount("new", auto(url, protocol=protocol))
            assert text_of(await registry.call("new__echo", {"text": "hi"})) == "hi"
            assert [row.transport for row in registry.status()] == ["auto (http)"]
            assert app.count("DELETE") == 1  # the probe's session, ended before mounting
        assert "speaks streamable HTTP" in caplog.text
        assert app.seen[0] == ("POST", "/mcp", "initialize")
        assert app.count("POST", "server/discover") == discovers
        assert app.count("POST", "initialize") == 2 - discovers


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        pytest.param(
            StatusApp(401, b"no"),
            r"HTTP 401 .* wants authorization; for an OAuth login add `oauth = true` .*`headers`$",
            id="401",
        ),
        pytest.param(StatusApp(500, b"boom"), r"HTTP 500 from \S+$", id="500"),
        pytest.param(
            StatusApp(404, b"nothing here"),
            r"HTTP 404 .* \(over legacy SSE: a streamable HTTP POST got HTTP 404\)$",
            id="404",
        ),
    ],
)
async def test_a_failure_says_which_transports_were_tried(app: StatusApp, expected: str) -> None:
    """Credentials refused or a server error are streamable HTTP's answers: no fallback.
    A 404 falls back to SSE, and when that fails too, the error says both."""
    async with serve_http(app) as url, Registry() as registry:
        with pytest.raises(ServerStartError, match=expected) as caught:
            await registry.mount("web", auto(url))
        assert "server 'web'" in str(caught.value)
