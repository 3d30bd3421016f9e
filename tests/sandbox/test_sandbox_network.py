"""A sandbox's network: none, the host's, or listed hosts only through mcpmount's proxy.

Only loopback is used: the allow-list names ``localhost`` and ``127.0.0.1`` with the port
of a listener the test opens (loopback must be listed as an address to be reached, see
``test_sandbox_proxy.py``), and another port stands for a host not listed.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from sandbox_support import PROBE, web_listener

from mcpmount.registry import Registry
from support import stdio_spec, text_of

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]


@pytest.fixture(name="web_port")
async def web_port_fixture() -> AsyncIterator[int]:
    """A loopback listener on an OS-chosen port answering any request with ``hello``."""
    async with web_listener() as port:
        yield port


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
    """Listed hosts are reached by HTTP and by CONNECT; a port not listed is refused.

    A direct connection fails: the proxy is the only way out.
    """
    caplog.set_level(logging.WARNING, logger="mcpmount")
    other = web_port + 1 if web_port < 65535 else web_port - 1
    sandbox = {"network": [f"localhost:{web_port}", f"127.0.0.1:{web_port}"]}
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))

        async def call(tool: str, **arguments: object) -> str:
            return text_of(await registry.call(f"probe__{tool}", arguments))

        assert await call("fetch", url=f"http://localhost:{web_port}/") == "ok: hello"
        assert await call("tunnel", host="localhost", port=web_port) == "ok: hello"
        assert await call("fetch", url=f"http://127.0.0.1:{web_port}/") == "ok: hello"
        why = f"server 'probe' may not reach localhost:{other}: it is not in the server's " + (
            "network list"
        )
        refused = await call("fetch", url=f"http://localhost:{other}/")
        assert refused == f"failed: HTTP 403: mcpmount sandbox: {why}"
        tunnel_refused = await call("tunnel", host="localhost", port=other)
        assert tunnel_refused == f"failed: HTTP/1.1 403 Forbidden: mcpmount sandbox: {why}"
        direct = await call("connect", port=web_port)
        assert direct.startswith("failed: ConnectionRefusedError")
    refusals = [r.getMessage() for r in caplog.records if "refused a connection" in r.getMessage()]
    assert (
        refusals
        == [
            f"server 'probe': its sandbox refused a connection to localhost:{other} "
            "(it is not in the server's network list)"
        ]
        * 2
    )
