"""The handshake says what `mcpmount serve` does, over stdio and HTTP, in both protocol eras.

Over HTTP the SDK's session manager builds its own handshake options; the front must still
advertise the change notices it sends (``listChanged``) and every capability it serves:
tools, prompts, resources (with subscriptions), completions and logging.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client

from serve.serve_support import BEHAVIOUR, connected, served_http, served_stdio, write_config
from support import fixture_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
"""Each era as a client reaches it: ``auto`` discovers (a fixed ``mode`` would skip it)."""


def check_capabilities(client: Client, version: str) -> None:
    assert client.protocol_version == version
    capabilities = client.server_capabilities
    assert capabilities is not None
    assert capabilities.tools == mcp_types.ToolsCapability(list_changed=True)
    assert capabilities.logging == mcp_types.LoggingCapability()
    assert capabilities.prompts == mcp_types.PromptsCapability(list_changed=True)
    assert capabilities.resources == mcp_types.ResourcesCapability(
        subscribe=True, list_changed=True
    )
    assert capabilities.completions == mcp_types.CompletionsCapability()


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_the_stdio_handshake_advertises_list_changed(
    tmp_path: Path, mode: str, version: str
) -> None:
    """stdio: tools are served with listChanged, in both eras."""
    config = write_config(tmp_path, fixture_server("one"))
    async with served_stdio(config, tmp_path, mode=mode) as client:
        check_capabilities(client, version)


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_the_http_handshake_advertises_list_changed(
    tmp_path: Path, mode: str, version: str
) -> None:
    """HTTP: the session manager's handshake advertises the notices serve sends."""
    config = write_config(tmp_path, fixture_server("one"))
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode=mode)) as client,
    ):
        check_capabilities(client, version)
        with anyio.fail_after(BEHAVIOUR):
            await client.list_tools()  # mounted: the shutdown is then quick


async def test_a_stateless_http_handshake_advertises_list_changed(tmp_path: Path) -> None:
    """--stateless takes another path through the SDK; it advertises the same."""
    config = write_config(tmp_path, fixture_server("one"))
    async with (
        served_http(config, tmp_path, "--stateless") as (url, _),
        connected(Client(url, mode="legacy")) as client,
    ):
        check_capabilities(client, "2025-11-25")
        with anyio.fail_after(BEHAVIOUR):
            await client.list_tools()
