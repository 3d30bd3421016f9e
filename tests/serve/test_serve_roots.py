"""Configured roots: told to a server that asks outside a call, or whose client has none.

`mcpmount serve` over stdio, driven by the SDK's Client, in front of the real
server-filesystem (tests/servers/npm, pinned): started without a folder, it asks its client
for roots as it starts, outside any call, and serves the folders it is told. And in front
of tests/servers/asking_server.py, whose ``roots`` tool asks mid-call.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from serve.relay_support import Host, served
from serve.serve_support import BEHAVIOUR, asking, wait_for_tool
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FILESYSTEM = SERVERS / "npm" / "node_modules" / ".bin" / "mcp-server-filesystem"

WARNING = "no client can tell them"


def filesystem(name: str, extra: str = "") -> str:
    """server-filesystem with no folder: it takes its roots as its folders."""
    assert FILESYSTEM.exists(), "server-filesystem is missing: npm ci --prefix tests/servers/npm"
    return f'[servers.{name}]\ncommand = "{FILESYSTEM}"\n{extra}\n'


def logged(tmp_path: Path) -> str:
    """serve's log, its lines wrapped by the console joined."""
    return " ".join((tmp_path / "serve.log").read_text().split())


def write(tmp_path: Path, registry: str, *servers: str) -> str:
    path = tmp_path / "serve.toml"
    path.write_text(f"[registry]\nstartup_timeout = 30\n{registry}\n\n" + "\n".join(servers))
    return str(path)


async def test_a_server_that_asks_as_it_starts_is_told_its_configured_roots(
    tmp_path: Path,
) -> None:
    """server-filesystem asks at start: ``own`` gets its own roots, ``shared`` the
    registry's; no warning is logged."""
    mine, ours = tmp_path / "mine", tmp_path / "ours"
    mine.mkdir()
    ours.mkdir()
    config = write(
        tmp_path,
        f"roots = [{json.dumps(str(ours))}]",
        filesystem("own", extra=f"roots = [{json.dumps(mine.as_uri())}]"),
        filesystem("shared"),
    )
    async with served(config, tmp_path, "stdio", "legacy") as client:  # a client without roots
        await wait_for_tool(client, "shared__list_allowed_directories")
        with anyio.fail_after(BEHAVIOUR):
            while True:  # it takes its roots a moment after its handshake
                own = text_of(await client.call_tool("own__list_allowed_directories", {}))
                shared = text_of(await client.call_tool("shared__list_allowed_directories", {}))
                if str(mine) in own and str(ours) in shared:
                    break
                await anyio.sleep(0.1)
    assert str(ours) not in own
    assert str(mine) not in shared
    assert WARNING not in logged(tmp_path)


async def test_unconfigured_roots_are_none_with_a_warning_that_says_how_to_give_them(
    tmp_path: Path,
) -> None:
    """No roots configured, a client without roots: the server is told none, and the
    log says to configure them."""
    config = write(tmp_path, "", asking("ask"))
    async with served(config, tmp_path, "stdio", "legacy") as client:
        await wait_for_tool(client, "ask__roots")
        with anyio.fail_after(BEHAVIOUR):
            rooted = await client.call_tool("ask__roots", {})
    assert text_of(rooted) == "roots: "
    log = logged(tmp_path)
    assert WARNING in log
    assert "roots = [...]" in log


@pytest.mark.parametrize(("mode", "upstream"), [("legacy", "legacy"), ("auto", "auto")])
async def test_a_call_whose_client_has_no_roots_tells_the_configured_ones(
    tmp_path: Path, mode: str, upstream: str
) -> None:
    """Mid-call, both eras: a client without roots → the configured roots, no warning; a
    client with roots → its own."""
    config = write(
        tmp_path, 'roots = ["/srv/data"]', asking("ask", extra=f'protocol = "{upstream}"')
    )
    async with served(config, tmp_path, "stdio", mode) as client:
        await wait_for_tool(client, "ask__roots")
        with anyio.fail_after(BEHAVIOUR):
            rooted = await client.call_tool("ask__roots", {})
    assert text_of(rooted) == "roots: file:///srv/data"
    assert WARNING not in logged(tmp_path)
    host = Host()
    async with served(config, tmp_path, "stdio", mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__roots")
        with anyio.fail_after(BEHAVIOUR):
            rooted = await client.call_tool("ask__roots", {})
    assert text_of(rooted) == "roots: file:///work/project"
    assert host.asked == ["roots"]
