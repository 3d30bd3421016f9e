"""Requests without a session find and call deferred tools: ``call_tool``, and a conversation key.

Real `mcpmount serve` processes over HTTP, real SDK Clients in both eras: the 2026-07-28 era
(mode auto) has no session over HTTP, and ``--stateless`` has none in either era. A
handshake-era session over stateful HTTP keeps its own list and is told of its finds.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client.session import MessageHandlerFnT

from mcpmount.serve import CALL_TOOL_NAME
from serve.serve_support import BEHAVIOUR, names, served_http, wait_for_tool
from serve_lists.lists_support import client_of, config_with, payload
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

ERAS = [
    pytest.param((), "auto", id="2026-era-http"),
    pytest.param(("--stateless",), "auto", id="2026-era-stateless"),
    pytest.param(("--stateless",), "legacy", id="handshake-era-stateless"),
]


def deferred_config(tmp_path: Path, serve: str = "") -> str:
    """``one`` fully deferred; ``two`` visible, so the manifest is not empty; ``serve``:
    the lines of a ``[serve]`` table."""
    one = fixture_server("one", extra="defer = true\nrequired = true")  # in the first list
    path = config_with(tmp_path, one, fixture_server("two", extra="required = true"))
    if serve:
        Path(path).write_text(Path(path).read_text() + f"\n[serve]\n{serve}\n")
    return path


@asynccontextmanager
async def served_deferred(
    tmp_path: Path, flags: tuple[str, ...], mode: str, on_message: MessageHandlerFnT | None = None
) -> AsyncGenerator[Client]:
    """A Client of `deferred_config` served over HTTP with ``flags``, once every server is up."""
    async with (
        served_http(deferred_config(tmp_path), tmp_path, *flags) as (url, _),
        client_of(url, mode=mode, message_handler=on_message) as client,
    ):
        await wait_for_tool(client, "two__echo")
        yield client


@pytest.mark.parametrize(("flags", "mode"), ERAS)
async def test_a_sessionless_client_calls_a_found_tool_through_call_tool(
    tmp_path: Path, flags: tuple[str, ...], mode: str
) -> None:
    """tool_search says to use call_tool and gives the schema; call_tool reaches the tool."""
    async with served_deferred(tmp_path, flags, mode) as client:
        with anyio.fail_after(BEHAVIOUR):
            listed = await client.list_tools()
            shown = names(listed)
            assert "one__add" not in shown
            assert shown[shown.index("tool_search") + 1] == CALL_TOOL_NAME
            search = next(t for t in listed.tools if t.name == "tool_search")
            assert "call_tool" in (search.description or "")

            found = payload(await client.call_tool("tool_search", {"query": "select:one__add"}))
            assert [t["name"] for t in found["tools"]] == ["one__add"]
            assert found["tools"][0]["inputSchema"]["properties"].keys() == {"a", "b"}
            assert found["call_with"] == CALL_TOOL_NAME
            assert "call_tool" in found["note"]

            added = await client.call_tool(
                CALL_TOOL_NAME, {"name": "one__add", "arguments": {"a": 2, "b": 3}}
            )
            assert not added.is_error
            assert added.structured_content == {"result": 5}
            # Without a conversation key nothing is kept: the list is the manifest.
            assert "one__add" not in names(await client.list_tools())


@pytest.mark.parametrize(("flags", "mode"), ERAS)
async def test_call_tool_maps_errors_like_tools_call_and_refuses_meta_tools(
    tmp_path: Path, flags: tuple[str, ...], mode: str
) -> None:
    """Unknown name: -32602; a tool's failure: its isError result; meta-tools: refused."""
    async with served_deferred(tmp_path, flags, mode) as client:
        with anyio.fail_after(BEHAVIOUR):
            with pytest.raises(MCPError) as unknown:
                await client.call_tool(CALL_TOOL_NAME, {"name": "one__nope", "arguments": {}})
            assert unknown.value.error.code == mcp_types.INVALID_PARAMS
            assert "one__nope" in unknown.value.error.message

            failed = await client.call_tool(
                CALL_TOOL_NAME, {"name": "one__fail", "arguments": {"message": "boom"}}
            )
            assert failed.is_error
            assert "boom" in text_of(failed)

            for meta in ("tool_search", CALL_TOOL_NAME):
                refused = await client.call_tool(
                    CALL_TOOL_NAME, {"name": meta, "arguments": {"query": "add"}}
                )
                assert refused.is_error
                assert f"call {meta} itself" in text_of(refused)

            malformed_calls: list[dict[str, object]] = [
                {"arguments": {}},
                {"name": "one__add", "arguments": [1]},
            ]
            for malformed in malformed_calls:
                bad = await client.call_tool(CALL_TOOL_NAME, malformed)
                assert bad.is_error
                assert "call_tool takes" in text_of(bad)

            echoed = await client.call_tool(
                CALL_TOOL_NAME, {"name": "one__echo", "arguments": {"text": "via"}}
            )
            assert text_of(echoed) == "via"


@pytest.mark.parametrize(("flags", "mode"), ERAS)
async def test_a_conversation_header_keeps_finds_for_that_conversation_only(
    tmp_path: Path, flags: tuple[str, ...], mode: str
) -> None:
    """A found tool joins the list of its conversation, across connections; no other's."""
    async with served_http(deferred_config(tmp_path), tmp_path, *flags) as (url, _):
        async with (
            client_of(url, mode=mode, conversation="conv-a") as a,
            client_of(url, mode=mode, conversation="conv-b") as b,
            client_of(url, mode=mode) as nobody,
        ):
            await wait_for_tool(a, "two__echo")
            with anyio.fail_after(BEHAVIOUR):
                found = payload(await a.call_tool("tool_search", {"query": "select:one__add"}))
                assert found["call_with"] == CALL_TOOL_NAME
                assert "Mcp-Conversation-Id" in found["note"]
                a_tools = names(await a.list_tools())
                assert "one__add" in a_tools
                assert CALL_TOOL_NAME in a_tools  # still there: a host may hold an old list
                assert "one__add" not in names(await b.list_tools())
                assert "one__add" not in names(await nobody.list_tools())

                await b.call_tool("tool_search", {"query": "select:one__echo"})
                assert "one__echo" in names(await b.list_tools())
                assert "one__echo" not in names(await a.list_tools())
                added = await a.call_tool("one__add", {"a": 1, "b": 2})
                assert added.structured_content == {"result": 3}
        # A new connection that names the same conversation sees what it found.
        async with client_of(url, mode=mode, conversation="conv-a") as again:
            with anyio.fail_after(BEHAVIOUR):
                tools = names(await again.list_tools())
            assert "one__add" in tools
            assert "one__echo" not in tools


async def test_a_malformed_conversation_header_is_refused(tmp_path: Path) -> None:
    """A header that is not a valid id is an invalid-params error, not a silent fallback."""
    async with (
        served_http(deferred_config(tmp_path), tmp_path, "--stateless") as (url, _),
        client_of(url, conversation="not valid!") as client,
    ):
        with anyio.fail_after(BEHAVIOUR * 2), pytest.raises(MCPError) as refused:
            await client.list_tools()
    assert refused.value.error.code == mcp_types.INVALID_PARAMS
    assert "Mcp-Conversation-Id" in refused.value.error.message


@pytest.mark.parametrize("offer", ["every", "sessionless"])
async def test_a_handshake_era_session_is_told_of_its_finds_and_sees_call_tool_unless_told_not(
    tmp_path: Path, offer: str
) -> None:
    """Stateful HTTP, legacy mode: found tools join its list, with list_changed; it sees
    call_tool (and is told to use it) unless ``[serve] call_tool = "sessionless"``."""
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    config = deferred_config(tmp_path, serve=f'call_tool = "{offer}"')
    async with (
        served_http(config, tmp_path) as (url, _),
        client_of(url, mode="legacy", message_handler=on_message) as client,
    ):
        await wait_for_tool(client, "two__echo")
        with anyio.fail_after(BEHAVIOUR):
            listed = names(await client.list_tools())
            found = payload(await client.call_tool("tool_search", {"query": "select:one__add"}))
            await changed.wait()
            assert "one__add" in names(await client.list_tools())
            # Callable through call_tool, listed or not.
            added = await client.call_tool(
                CALL_TOOL_NAME, {"name": "one__add", "arguments": {"a": 4, "b": 4}}
            )
    assert added.structured_content == {"result": 8}
    shown = offer == "every"
    assert (CALL_TOOL_NAME in listed, "call_with" in found) == (shown, shown)
    if shown:
        assert listed.index(CALL_TOOL_NAME) == listed.index("tool_search") + 1
        assert "Mcp-Conversation-Id" not in found["note"]  # a session's list is its own
