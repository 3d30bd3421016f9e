"""The clients issue 14 names, against real `mcpmount serve --transport http` processes.

fastmcp's ``Client`` and the OpenAI Agents SDK's ``MCPServerStreamableHttp`` (driven directly:
no model, no API key, tracing off) both speak the 2026-07-28 era by default, so they have no
session: they find deferred tools with ``tool_search``, call them through ``call_tool``, and
see them in their list when they name their conversation with ``Mcp-Conversation-Id``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import anyio
import mcp_types
import pytest
from agents.mcp import MCPServerStreamableHttp
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StreamableHttpTransport

from mcpmount.serve import CALL_TOOL_NAME, CONVERSATION_HEADER
from serve.serve_support import BEHAVIOUR, STARTUP, served_http
from serve_lists.lists_support import config_with
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FLAGS = [pytest.param((), id="http"), pytest.param(("--stateless",), id="stateless")]

AGENTS_SDK_TIMEOUT = 5.0
"""The OpenAI Agents SDK's default read timeout (`client_session_timeout_seconds`)."""


def deferred_config(tmp_path: Path, *more: str) -> str:
    """``one`` fully deferred, ``two`` visible, then ``more`` servers; the first list
    waits for ``one`` and ``two`` (``required = true``), as a client that lists once needs."""
    deferred = fixture_server("one", extra="defer = true\nrequired = true")
    return config_with(tmp_path, deferred, fixture_server("two", extra="required = true"), *more)


class ToolResult(Protocol):
    """A tool's result as both clients give it (fastmcp has its own class)."""

    @property
    def is_error(self) -> bool: ...
    @property
    def structured_content(self) -> dict[str, Any] | None: ...


def structured(result: ToolResult) -> dict[str, Any]:
    """The structured content of a result, which must have some and not be an error."""
    assert not result.is_error, result
    assert result.structured_content is not None, result
    return result.structured_content


@asynccontextmanager
async def fastmcp_client(url: str, headers: dict[str, str]) -> AsyncGenerator[FastMCPClient[Any]]:
    """A connected fastmcp Client of ``url`` sending ``headers``."""
    transport = StreamableHttpTransport(url, headers=headers)
    async with FastMCPClient(transport, timeout=BEHAVIOUR, init_timeout=STARTUP) as client:
        yield client


async def fastmcp_names(client: FastMCPClient[Any]) -> list[str]:
    return [tool.name for tool in await client.list_tools()]


@pytest.mark.parametrize("flags", FLAGS)
async def test_fastmcp_finds_and_calls_a_deferred_tool(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """Listed meta-tools, a search, call_tool, and the find in its conversation's next list."""
    async with (
        served_http(deferred_config(tmp_path), tmp_path, *flags) as (url, _),
        fastmcp_client(url, {CONVERSATION_HEADER: "fastmcp-conv"}) as client,
        fastmcp_client(url, {}) as nobody,
    ):
        with anyio.fail_after(STARTUP):
            while "two__echo" not in await fastmcp_names(client):
                await anyio.sleep(0.1)
        with anyio.fail_after(BEHAVIOUR):
            shown = await fastmcp_names(client)
            assert {"tool_search", CALL_TOOL_NAME} <= set(shown)
            assert "one__add" not in shown

            echoed = await client.call_tool("two__echo", {"text": "hi"})
            assert not echoed.is_error
            assert [c.text for c in echoed.content if isinstance(c, mcp_types.TextContent)] == [
                "hi"
            ]

            found = structured(await client.call_tool("tool_search", {"query": "select:one__add"}))
            assert [t["name"] for t in found["tools"]] == ["one__add"]
            assert found["call_with"] == CALL_TOOL_NAME

            added = await client.call_tool(
                CALL_TOOL_NAME, {"name": "one__add", "arguments": {"a": 2, "b": 3}}
            )
            assert structured(added) == {"result": 5}

            assert "one__add" in await fastmcp_names(client)
            assert "one__add" not in await fastmcp_names(nobody)
            direct = await client.call_tool("one__add", {"a": 1, "b": 2})
            assert structured(direct) == {"result": 3}


@asynccontextmanager
async def agents_server(
    url: str, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> AsyncGenerator[MCPServerStreamableHttp]:
    """A connected Agents SDK MCP server of ``url``, with its default timeouts."""
    # Only the MCP server object is driven: no model call, and no trace is exported.
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    server = MCPServerStreamableHttp(
        params={"url": url, "headers": headers}, cache_tools_list=False
    )
    with anyio.fail_after(STARTUP):
        await server.connect()
    try:
        yield server
    finally:
        with anyio.fail_after(BEHAVIOUR):
            await server.cleanup()


async def agents_names(server: MCPServerStreamableHttp) -> list[str]:
    return [tool.name for tool in await server.list_tools()]


@pytest.mark.parametrize("flags", FLAGS)
async def test_the_agents_sdk_lists_within_its_timeout_despite_a_hung_server(
    tmp_path: Path, flags: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """First list inside the SDK's 5 s while ``hung`` never starts; search, call, list again."""
    hung = fixture_server("hung", "--no-init", extra="required = false")
    config = deferred_config(tmp_path, hung)
    async with (
        served_http(config, tmp_path, *flags) as (url, _),
        agents_server(url, {CONVERSATION_HEADER: "agents-conv"}, monkeypatch) as server,
        agents_server(url, {}, monkeypatch) as nobody,
    ):
        began = anyio.current_time()
        first = await agents_names(server)  # its own timeout applies: that is the point
        assert anyio.current_time() - began < AGENTS_SDK_TIMEOUT
        assert "tool_search" in first
        with anyio.fail_after(STARTUP):
            while "two__echo" not in await agents_names(server):
                await anyio.sleep(0.1)
        with anyio.fail_after(BEHAVIOUR):
            shown = await agents_names(server)
            assert CALL_TOOL_NAME in shown
            assert "one__add" not in shown
            assert not any(name.startswith("hung__") for name in shown)

            found = structured(await server.call_tool("tool_search", {"query": "select:one__add"}))
            assert [t["name"] for t in found["tools"]] == ["one__add"]

            added = await server.call_tool(
                CALL_TOOL_NAME, {"name": "one__add", "arguments": {"a": 4, "b": 5}}
            )
            assert structured(added) == {"result": 9}
            assert "one__add" in await agents_names(server)
            assert "one__add" not in await agents_names(nobody)
