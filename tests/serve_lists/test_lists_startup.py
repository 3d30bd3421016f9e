"""The first list answers soon: it waits for required servers, and for the others a short bound.

A hung optional server (``--no-init``: it never answers its handshake) and a slow one
(``--startup-delay``) must not hold the first ``tools/list`` past ``first_list_wait``; the
slow one's tools are announced when it mounts. No notice reaches a session before its first
list is answered, and a burst of changes is one notice.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.shared.subscriptions import ToolsListChanged

from serve.serve_support import STARTUP, names, served_http
from serve_lists.lists_support import client_of, config_with
from support import fixture_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

AGENTS_SDK_TIMEOUT = 5.0
"""The OpenAI Agents SDK's default: how long it waits for the first list."""

SLOW = 6.0
"""Seconds the slow server sleeps before it serves (well past the bound)."""


def late_servers(tmp_path: Path, registry: str = "first_list_wait = 1\n") -> str:
    """``hung`` never answers, ``slow`` comes up late; neither is required."""
    optional = "required = false\n"
    return config_with(
        tmp_path,
        fixture_server("hung", "--no-init", extra=optional),
        fixture_server("slow", "--startup-delay", str(SLOW), extra=optional),
        fixture_server("fast", extra=optional),
        registry=registry,
    )


class Notices:
    """The tools list_changed notices a handshake-era client got, and when."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.count += 1
            self.changed.set()

    async def until(self, client_tools: Client, name: str) -> None:
        """Wait for notices until ``name`` is listed."""
        while name not in names(await client_tools.list_tools()):
            await self.changed.wait()
            self.changed = anyio.Event()


async def test_a_hung_optional_server_does_not_hold_the_first_list_handshake_era(
    tmp_path: Path,
) -> None:
    """The first list comes within the bound; the slow server is announced when it mounts."""
    notices = Notices()
    async with (
        served_http(late_servers(tmp_path), tmp_path) as (url, _),
        client_of(url, mode="legacy", message_handler=notices) as client,
    ):
        began = anyio.current_time()
        with anyio.fail_after(STARTUP):
            first = names(await client.list_tools())
        assert anyio.current_time() - began < AGENTS_SDK_TIMEOUT
        assert notices.count == 0  # nothing before the first list was answered
        assert not {"hung__echo", "slow__echo"} & set(first)
        with anyio.fail_after(STARTUP):
            await notices.until(client, "slow__echo")
        assert notices.count >= 1
        assert "hung__echo" not in names(await client.list_tools())


async def test_a_hung_optional_server_does_not_hold_the_first_list_2026_era(
    tmp_path: Path,
) -> None:
    """Same over 2026-07-28 HTTP: the slow server's mount reaches the listen stream."""
    async with (
        served_http(late_servers(tmp_path), tmp_path) as (url, _),
        client_of(url) as client,
    ):
        began = anyio.current_time()
        with anyio.fail_after(STARTUP):
            first = names(await client.list_tools())
        assert anyio.current_time() - began < AGENTS_SDK_TIMEOUT
        assert client.protocol_version == "2026-07-28"
        assert "slow__echo" not in first
        with anyio.fail_after(STARTUP):
            async with client.listen(tools_list_changed=True) as events:
                async for event in events:
                    assert isinstance(event, ToolsListChanged)
                    if "slow__echo" in names(await client.list_tools()):
                        break


async def test_a_required_server_is_waited_for_past_the_bound(tmp_path: Path) -> None:
    """A required server slower than first_list_wait is in the first list; a hung optional
    one is not waited for."""
    config = config_with(
        tmp_path,
        fixture_server("hung", "--no-init", extra="required = false\n"),
        fixture_server("needed", "--startup-delay", "3", extra="required = true\n"),
        registry="first_list_wait = 0.2\n",
    )
    async with (
        served_http(config, tmp_path, "--stateless") as (url, _),
        client_of(url) as client,
    ):
        with anyio.fail_after(STARTUP):
            first = names(await client.list_tools())
        assert "needed__echo" in first
        assert "hung__echo" not in first


async def test_servers_mounting_late_together_are_one_notice_after_the_first_list(
    tmp_path: Path,
) -> None:
    """Four optional servers that come up after the first list are announced once, counted;
    no notice came before the first list was answered (there were four, on one process)."""
    notices = Notices()
    late = [
        fixture_server(f"late{i}", "--startup-delay", str(SLOW), extra="required = false\n")
        for i in range(4)
    ]
    config = config_with(
        tmp_path,
        *late,
        fixture_server("fast", extra="required = true\n"),
        registry="first_list_wait = 0.5\n",
    )
    async with (
        served_http(config, tmp_path) as (url, _),
        client_of(url, mode="legacy", message_handler=notices) as client,
    ):
        with anyio.fail_after(STARTUP):
            first = names(await client.list_tools())
        assert notices.count == 0
        assert "fast__echo" in first
        assert not any(name.startswith("late") for name in first)
        with anyio.fail_after(STARTUP):
            wanted = {f"late{i}__echo" for i in range(4)}
            while not wanted <= set(names(await client.list_tools())):
                await notices.changed.wait()
                notices.changed = anyio.Event()
        # A notice still coming for this burst comes within MAX_DELAY (2 s) of its start.
        await anyio.sleep(3)
    assert notices.count == 1
