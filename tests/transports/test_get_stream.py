"""``get_stream = false``: streamable HTTP without its standalone GET stream.

Every test requests ``no_leaks``.
"""

from __future__ import annotations

import time
from typing import Literal

import anyio
import pytest

from http_fixture import serve_http
from mcpmount.config import HttpServer
from mcpmount.registry import Registry
from servers.sse_faults import Recorder, build_sse_server
from support import text_of

pytestmark = pytest.mark.usefixtures("no_leaks")


async def test_a_handshake_era_session_opens_its_get_stream_by_default() -> None:
    """The control: without the switch, the SDK asks the server for its GET stream."""
    app = Recorder(build_sse_server().streamable_http_app())
    async with serve_http(app) as url, Registry() as registry:
        await registry.mount("web", HttpServer(url=url, protocol="legacy"))
        with anyio.fail_after(10):
            while app.count("GET") == 0:
                await anyio.sleep(0.05)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_with_the_switch_off_no_get_is_sent_and_calls_work(
    protocol: Literal["auto", "legacy"],
) -> None:
    """No GET ever reaches the server, in either era; calls, and a close, work as before."""
    app = Recorder(build_sse_server().streamable_http_app())
    async with serve_http(app) as url:
        async with Registry() as registry:
            spec = HttpServer(url=url, protocol=protocol, get_stream=False)
            close = await registry.mount("web", spec)
            assert text_of(await registry.call("web__echo", {"text": "hi"})) == "hi"
            await anyio.sleep(0.5)  # the control test's GET comes well within this
            assert text_of(await registry.call("web__add", {"a": 1, "b": 2})) == "3"
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 3.5
        assert app.count("GET") == 0
        assert app.count("POST", "tools/call") == 2
