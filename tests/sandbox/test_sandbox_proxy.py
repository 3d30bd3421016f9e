"""The allow-list proxy checks addresses, not only names, and caps what a server holds.

A name on the list may resolve anywhere: ``localhost`` to the host's loopback, where
serve's port and Redis listen. Through a real sandboxed probe server, each check here is
shown failing without its guard (``network = true``, or no sandbox), so it can fail.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import resource
from collections.abc import AsyncIterator
from ipaddress import ip_address

import anyio
import pytest
from anyio.abc import SocketStream
from sandbox_support import PROBE, web_listener

from mcpmount.config import SandboxTable
from mcpmount.registry import Registry
from mcpmount.sandbox._addresses import AllowList, Refused, classify, held_here, resolve
from mcpmount.upstream import ServerState
from support import fixture, stdio_spec, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


@pytest.fixture(name="port")
async def port_fixture() -> AsyncIterator[int]:
    """A loopback service (like serve's port), see `web_listener`."""
    async with web_listener() as port:
        yield port


@pytest.mark.usefixtures("bwrap")
@pytest.mark.parametrize("case", ["name-listed", "address-listed", "network-on", "unsandboxed"])
async def test_a_listed_name_that_resolves_to_loopback_reaches_it_only_if_its_address_is_listed(
    port: int, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``localhost:PORT`` listed is refused with the reason; ``127.0.0.1:PORT`` listed reaches.

    Without the proxy's check (the host's network, or no sandbox) the service is reached.
    """
    caplog.set_level(logging.WARNING, logger="mcpmount")
    sandbox: object = {
        "name-listed": {"network": [f"localhost:{port}"]},
        "address-listed": {"network": [f"localhost:{port}", f"127.0.0.1:{port}"]},
        "network-on": {"network": True},
        "unsandboxed": False,
    }[case]
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))

        async def call(tool: str, **arguments: object) -> str:
            return text_of(await registry.call(f"probe__{tool}", arguments))

        fetched = await call("fetch", url=f"http://localhost:{port}/")
        if case != "name-listed":
            assert fetched == "ok: hello"
            return
        why = (
            f"server 'probe' may not reach localhost:{port}: it resolves to 127.0.0.1, a "
            f'loopback address; list the address itself ("127.0.0.1:{port}") to allow it'
        )
        assert fetched == f"failed: HTTP 403: mcpmount sandbox: {why}"
        tunnelled = await call("tunnel", host="localhost", port=port)
        assert tunnelled == f"failed: HTTP/1.1 403 Forbidden: mcpmount sandbox: {why}"
        # The address itself, as a literal, is not on the list either.
        literal = await call("tunnel", host="127.0.0.1", port=port)
        assert literal.startswith("failed: HTTP/1.1 403 Forbidden:")
        assert "it is not in the server's network list" in literal
    logged = [r.getMessage() for r in caplog.records if "refused a connection" in r.getMessage()]
    assert logged[0] == (
        f"server 'probe': its sandbox refused a connection to localhost:{port} "
        f"(it resolves to 127.0.0.1, a loopback address; list the address itself "
        f'("127.0.0.1:{port}") to allow it)'
    )


def _fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.usefixtures("bwrap")
async def test_a_server_opening_connections_without_end_is_capped_and_the_registry_keeps_fds(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Past ``max_connections`` the proxy answers ``503``; the registry's fds stay bounded.

    The registry runs with few fds to spare (like a desktop's 1,024): uncapped, the
    server's tunnels (three fds each here, the listener being in this process) would take
    them all, and no server could be mounted. Capped, another server mounts and restarts.
    """
    caplog.set_level(logging.INFO, logger="mcpmount")
    cap, tries = 8, 150
    sandbox = {"network": [f"127.0.0.1:{port}"], "max_connections": cap}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))
        before = _fd_count()
        # Spawned servers keep their own limit; only this process (the registry) is short.
        resource.setrlimit(resource.RLIMIT_NOFILE, (before + 3 * cap + 100, hard))
        try:
            held = text_of(
                await registry.call(
                    "probe__hold", {"host": "127.0.0.1", "port": port, "count": tries}
                )
            )
            during = _fd_count()
            await registry.mount("other", fixture())
            assert text_of(await registry.call("other__echo", {"text": "hi"})) == "hi"
            await registry.unmount("other")
            await registry.mount("other", fixture())
            assert text_of(await registry.call("other__echo", {"text": "again"})) == "again"
            await registry.unmount("other")
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert during - before <= 3 * cap + 10
        why = (
            f"mcpmount sandbox: server 'probe' may not open more: {cap} connections are "
            "open, its max_connections"
        )
        assert held == f"ok: {cap} open, {tries - cap} refused; first refusal: {why}"
        warned = [r for r in caplog.records if "refuses new connections" in r.getMessage()]
        assert len(warned) == 1  # once per burst, not once per refusal
        assert warned[0].getMessage().startswith("server 'probe': its sandbox's proxy refuses")
        # Closed ones make room again.
        assert text_of(await registry.call("probe__release", {})) == f"ok: closed {cap}"
        with anyio.fail_after(10):
            while True:
                again = text_of(
                    await registry.call(
                        "probe__hold", {"host": "127.0.0.1", "port": port, "count": 1}
                    )
                )
                if again.startswith("ok: 1 open"):
                    break
                await anyio.sleep(0.05)
        await registry.call("probe__release", {})


@pytest.mark.usefixtures("bwrap")
async def test_a_proxy_that_cannot_accept_for_want_of_fds_waits_and_keeps_its_server(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Out of fds for a moment, the proxy logs once and accepts later; the server lives on.

    Letting accept's error out would end the server's transport with it.
    """
    caplog.set_level(logging.WARNING, logger="mcpmount")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    said: list[str] = []
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox={"network": [f"127.0.0.1:{port}"]}))

        async def tunnel() -> None:
            arguments = {"host": "127.0.0.1", "port": port}
            said.append(text_of(await registry.call("probe__tunnel", arguments)))

        await tunnel()  # the first call imports what calls need (files: fds)
        async with anyio.create_task_group() as tg:
            resource.setrlimit(resource.RLIMIT_NOFILE, (1, hard))  # no new fd in this process
            try:
                tg.start_soon(tunnel)
                with anyio.fail_after(30):
                    while not any("cannot accept" in r.getMessage() for r in caplog.records):
                        await anyio.sleep(0.02)
            finally:
                resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert said == ["ok: hello"] * 2
        assert registry.status()[0].state is ServerState.READY
    starved = [r.getMessage() for r in caplog.records if "cannot accept" in r.getMessage()]
    assert len(starved) == 1
    assert starved[0].startswith("server 'probe': its sandbox's proxy cannot accept a connection")


@pytest.fixture(name="flood_port")
async def flood_port_fixture() -> AsyncIterator[int]:
    """A loopback service that sends data to each connection as fast as it is read."""

    async def flood(stream: SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                while True:
                    await stream.send(b"x" * 65536)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, flood)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()


@pytest.mark.usefixtures("bwrap")
async def test_a_server_that_leaves_data_unread_hits_its_byte_cap_and_is_refused(
    flood_port: int,
) -> None:
    """A tunnel the server never reads fills up; at ``max_buffered_bytes`` new ones get ``503``.

    The proxy holds what it read and cannot write; past the cap it reads no more for the
    server and takes no new connection from it.
    """
    sandbox = {"network": [f"127.0.0.1:{flood_port}"], "max_buffered_bytes": 1024}
    async with Registry() as registry:
        await registry.mount("probe", stdio_spec(PROBE, sandbox=sandbox))
        arguments = {"host": "127.0.0.1", "port": flood_port, "count": 1}
        said = ""
        with anyio.fail_after(30):
            for _ in range(50):  # kernel buffers fill first: each opened tunnel adds to them
                said = text_of(await registry.call("probe__hold", arguments))
                if "refused" in said and not said.startswith("ok: 1 open"):
                    break
                await anyio.sleep(0.1)
        # Reads in progress when the cap was reached may pass it by one read each.
        assert re.fullmatch(
            "ok: 0 open, 1 refused; first refusal: mcpmount sandbox: server 'probe' may not "
            r"open more: \d+ bytes are in flight, over its max_buffered_bytes",
            said,
        )
        await registry.call("probe__release", {})


ADDRESSES = [
    ("127.0.0.1", "a loopback address"),
    ("127.8.9.10", "a loopback address"),
    ("::1", "a loopback address"),
    ("0.0.0.0", "the unspecified address"),
    ("::", "the unspecified address"),
    ("10.1.2.3", "a private address"),
    ("172.16.0.1", "a private address"),
    ("192.168.1.1", "a private address"),
    ("fd12::1", "a private address"),
    ("fec0::1", "a private address"),
    ("169.254.169.254", "the cloud metadata address"),
    ("fd00:ec2::254", "the cloud metadata address"),
    ("169.254.1.1", "a link-local address"),
    ("fe80::1", "a link-local address"),
    ("fe80::1%2", "a link-local address"),
    ("100.64.0.1", "a shared (CGNAT) address"),
    ("100.127.255.254", "a shared (CGNAT) address"),
    ("224.0.0.1", "a multicast address"),
    ("ff02::1", "a multicast address"),
    ("255.255.255.255", "the broadcast address"),
    ("192.0.2.1", "a reserved address"),
    ("198.18.0.1", "a reserved address"),
    ("240.0.0.1", "a reserved address"),
    ("0.1.2.3", "a reserved address"),
    ("2001:db8::1", "a reserved address"),
    ("::ffff:127.0.0.1", "an IPv4-mapped form of 127.0.0.1, a loopback address"),
    (
        "::ffff:169.254.169.254",
        "an IPv4-mapped form of 169.254.169.254, the cloud metadata address",
    ),
    ("::127.0.0.1", "an IPv4-compatible form of 127.0.0.1, a loopback address"),
    ("64:ff9b::10.0.0.1", "an NAT64 form of 10.0.0.1, a private address"),
    ("2002:7f00:1::", "a 6to4 form of 127.0.0.1, a loopback address"),
    ("8.8.8.8", None),
    ("100.128.0.1", None),
    ("2606:4700::1111", None),
    ("::ffff:8.8.8.8", None),
]


@pytest.mark.parametrize(("address", "kind"), ADDRESSES, ids=[a for a, _ in ADDRESSES])
def test_each_address_is_classified_by_what_it_reaches(address: str, kind: str | None) -> None:
    """Non-public addresses say what they are, also in IPv6 forms of IPv4; public ones pass."""
    assert classify(ip_address(address)) == kind


def test_an_address_of_this_machine_is_held_here() -> None:
    """Binding tells whether an address is this machine's (public ones reach its services)."""
    assert held_here(ip_address("127.0.0.1"))
    assert not held_here(ip_address("192.0.2.1"))


async def test_an_address_is_allowed_only_as_listed_and_names_resolve_once() -> None:
    """A literal must be listed itself (mapped forms alike); a name's loopback needs its address."""
    allow = AllowList(("localhost:8080", "10.0.0.5", "[fd00::1]:9000", "*.example.com"))
    assert allow.lists_address(ip_address("10.0.0.5"), 443)
    assert allow.lists_address(ip_address("::ffff:10.0.0.5"), 80)
    assert not allow.lists_address(ip_address("10.0.0.5"), 8080)
    assert allow.lists_address(ip_address("fd00::1"), 9000)
    assert allow.allows_name("API.Example.com.", 443)
    assert not allow.allows_name("example.com", 443)
    assert await resolve(allow, "10.0.0.5", 443) == [ip_address("10.0.0.5")]
    assert await resolve(allow, "[fd00::1]", 9000) == [ip_address("fd00::1")]
    with pytest.raises(Refused, match="not in the server's network list"):
        await resolve(allow, "10.0.0.6", 443)
    with pytest.raises(Refused, match=r"resolves to .*a loopback address"):
        await resolve(allow, "localhost", 8080)
    listed = AllowList(("localhost:8080", "127.0.0.1:8080"))
    assert await resolve(listed, "localhost", 8080) == [ip_address("127.0.0.1")]


@pytest.mark.parametrize(
    ("entry", "kept"),
    [
        ("Example.COM", "example.com"),
        ("*.example.com:8443", "*.example.com:8443"),
        ("10.0.0.5", "10.0.0.5"),
        ("127.0.0.1:8080", "127.0.0.1:8080"),
        ("[FD00::1]", "[fd00::1]"),
        ("[fd00:0::1]:9000", "[fd00::1]:9000"),
        ("::1", None),
        ("[::1", None),
        ("[::1]:", None),
        ("[fe80::1%eth0]", None),
        ("example.com:0", None),
        ("example.com:65536", None),
        ("exa mple.com", None),
    ],
)
def test_a_network_entry_is_a_name_or_an_address_with_an_optional_port(
    entry: str, kept: str | None
) -> None:
    """Addresses are kept as ``ipaddress`` writes them; IPv6 needs its brackets."""
    if kept is None:
        with pytest.raises(ValueError, match="must be a host name or address"):
            SandboxTable(network=[entry])
    else:
        assert SandboxTable(network=[entry]).network == [kept]
