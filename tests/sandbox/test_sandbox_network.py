"""A sandbox's network: none, the host's, or listed hosts only through mcpmount's proxy.

Only loopback is used: the allow-list names ``localhost`` with the port of a listener the
test opens, and the same listener reached as ``127.0.0.1`` stands for a host not listed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio
import pytest
from anyio.abc import SocketStream
from sandbox_support import PROBE

from mcpmount.registry import Registry
from support import stdio_spec, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]


@pytest.fixture(name="web_port")
async def web_port_fixture() -> AsyncIterator[int]:
    """A loopback listener on an OS-chosen port answering any request with ``hello``."""

    async def answer(stream: SocketStream) -> None:
        # A bare connection (the probe's ``connect``) sends nothing: it is answered after 1 s.
        # A client gone early must not fail the listener, which would cancel the test.
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                request = b""
                with anyio.move_on_after(1):
                    while b"\r\n\r\n" not in request:
                        request += await stream.receive()
                await stream.send(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
async def test_network_false_cuts_the_network_and_true_keeps_it(
    web_port: int, network: bool
) -> None:
    """The same connection fails in an empty network namespace and works in the host's."""
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox={"network": network}))
        said = text_of(await registry.call("probe__connect", {"port": web_port}))
    assert said.startswith("ok: HTTP/1.0 200" if network else "failed: ConnectionRefusedError")


async def test_an_allow_list_reaches_listed_hosts_only_through_the_proxy(
    web_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """``localhost:PORT`` is reached by HTTP and by CONNECT; ``127.0.0.1`` is refused by name.

    A direct connection fails: the proxy is the only way out.
    """
    caplog.set_level(logging.WARNING, logger="mcpmount")
    sandbox = {"network": [f"localhost:{web_port}"]}
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))

        async def call(tool: str, **arguments: object) -> str:
            return text_of(await registry.call(f"probe__{tool}", arguments))

        assert await call("fetch", url=f"http://localhost:{web_port}/") == "ok: hello"
        assert await call("tunnel", host="localhost", port=web_port) == "ok: hello"
        refused = await call("fetch", url=f"http://127.0.0.1:{web_port}/")
        assert refused == "failed: HTTPError: HTTP Error 403: Forbidden"
        tunnel_refused = await call("tunnel", host="127.0.0.1", port=web_port)
        assert tunnel_refused == "failed: HTTP/1.1 403 Forbidden"
        direct = await call("connect", port=web_port)
        assert direct.startswith("failed: ConnectionRefusedError")
    refusals = [r.getMessage() for r in caplog.records if "refused a connection" in r.getMessage()]
    assert (
        refusals
        == [
            f"server 'probe': its sandbox refused a connection to 127.0.0.1:{web_port} "
            "(not in its network list)"
        ]
        * 2
    )
