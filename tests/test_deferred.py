"""Deferred tools, the manifest and tool_search, against real servers."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from leaks import record_group
from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.registry import Registry, RegistryChange
from mcpmount.search import TOOL_SEARCH_NAME
from support import fixture

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


async def mounted(registry: Registry, server: str, spec: StdioServer) -> None:
    await registry.mount(server, spec)
    pid = next(row.pid for row in registry.status() if row.server == server)
    if pid is not None:
        record_group(pid)


def names(tools: list[mcp_types.Tool]) -> list[str]:
    return [tool.name for tool in tools]


def found(result: mcp_types.CallToolResult) -> list[str]:
    payload: dict[str, Any] = result.structured_content or {}
    tools: list[dict[str, Any]] = payload["tools"]
    return [tool["name"] for tool in tools]


async def test_without_deferred_tools_the_manifest_has_no_tool_search() -> None:
    """tool_search appears only when something is hidden."""
    async with Registry() as registry:
        await mounted(registry, "one", fixture())
        assert TOOL_SEARCH_NAME not in names(registry.tools())


async def test_a_deferred_server_is_hidden_searchable_and_callable() -> None:
    """defer = true hides every tool; tool_search finds them; a call by name works."""
    async with Registry() as registry:
        await mounted(registry, "vis", fixture())
        await mounted(registry, "hid", fixture(defer=True))
        manifest = names(registry.tools())
        assert "vis__add" in manifest
        assert not any(name.startswith("hid__") for name in manifest)
        assert manifest[-1] == TOOL_SEARCH_NAME
        result = await registry.call(TOOL_SEARCH_NAME, {"query": "hid__add"})
        assert found(result)[0] == "hid__add"
        schema = result.structured_content["tools"][0]["inputSchema"]  # pyright: ignore[reportOptionalSubscript]
        assert set(schema["properties"]) == {"a", "b"}
        added = await registry.call("hid__add", {"a": 1, "b": 2})
        assert added.structured_content == {"result": 3}


async def test_defer_globs_and_visible_choose_tools_by_raw_name() -> None:
    """defer = [globs] hides matches; visible keeps a match visible."""
    spec = fixture("--tools", "3", defer=["tool_*", "sleep"], visible=["tool_1"])
    async with Registry() as registry:
        await mounted(registry, "g", spec)
        manifest = names(registry.tools())
        assert "g__tool_1" in manifest
        assert "g__tool_0" not in manifest
        assert "g__sleep" not in manifest
        assert "g__echo" in manifest


async def test_defer_all_hides_everything_but_visible() -> None:
    """The registry-wide switch, with a per-server visible list."""
    async with Registry(RegistrySettings(defer_all=True)) as registry:
        await mounted(registry, "a", fixture(visible=["echo"]))
        assert names(registry.tools()) == ["a__echo", TOOL_SEARCH_NAME]


async def test_a_view_remembers_what_its_searches_found_across_turns() -> None:
    """Activation survives: a found tool stays in that view's tools(), not in others'."""
    async with Registry() as registry:
        await mounted(registry, "hid", fixture(defer=True))
        view, other = registry.view(), registry.view()
        result = await view.call(TOOL_SEARCH_NAME, {"query": "add two integers", "limit": 2})
        hits = found(result)
        assert hits
        assert hits[0] == "hid__add"
        for _ in range(3):  # later turns
            assert set(hits) <= set(names(view.tools()))
        assert not set(hits) & set(names(other.tools()))
        added = await view.call("hid__add", {"a": 2, "b": 2})
        assert added.structured_content == {"result": 4}


async def test_a_python_format_search_leaves_the_view_as_it_was() -> None:
    """Stubs are read to write a program: their JSON definitions must not join each turn."""
    async with Registry() as registry:
        await mounted(registry, "hid", fixture(defer=True))
        view = registry.view()
        before = names(view.tools())
        query = {"query": "add two integers", "limit": 2, "format": "python"}
        stubs = await view.call(TOOL_SEARCH_NAME, query)
        text = stubs.content[0]
        assert isinstance(text, mcp_types.TextContent)
        assert "def add(" in text.text
        assert names(view.tools()) == before
        await view.call(TOOL_SEARCH_NAME, {**query, "format": "json"})
        assert "hid__add" in names(view.tools())


async def test_the_index_follows_mounts_and_unmounts() -> None:
    """An unmounted server's tools leave search; a new one's arrive."""
    async with Registry() as registry:
        close = await registry.mount("first", fixture(defer=True))
        assert registry.search("first__echo").hits[0].tool.name == "first__echo"
        await close()
        assert registry.search("first__echo").hits == ()
        await mounted(registry, "second", fixture(defer=True))
        assert registry.search("echo").hits[0].tool.server == "second"


async def test_a_bad_tool_search_call_is_an_error_result_with_a_hint() -> None:
    """Wrong argument types, empty or unmatched queries never raise."""
    async with Registry() as registry:
        await mounted(registry, "hid", fixture(defer=True))
        wrong = await registry.call(TOOL_SEARCH_NAME, {"query": 3})
        assert wrong.is_error
        empty = await registry.call(TOOL_SEARCH_NAME, {"query": ""})
        assert not empty.is_error
        assert found(empty) == []
        assert empty.structured_content["hint"]  # pyright: ignore[reportOptionalSubscript]


async def test_listeners_hear_one_change_per_mount_and_unmount() -> None:
    """Each change names the server and the public names it added or removed."""
    changes: list[RegistryChange] = []
    async with Registry() as registry:
        unsubscribe = registry.subscribe(changes.append)
        close = await registry.mount("one", fixture("--tools", "1"))
        await close()
        unsubscribe()
        await mounted(registry, "two", fixture())
    assert [c.server for c in changes] == ["one", "one"]
    assert "one__tool_0" in changes[0].added
    assert set(changes[1].removed) == set(changes[0].added)


async def test_behaviour_hints_are_exported_only_for_trusted_servers() -> None:
    """readOnlyHint from an untrusted server is dropped (its title kept); trusted, it stays."""
    raw = (
        '[{"name": "wipe", "inputSchema": {"type": "object"}, '
        '"annotations": {"title": "Wipe", "readOnlyHint": true, "destructiveHint": false}}]'
    )
    async with Registry() as registry:
        await mounted(registry, "liar", fixture("--raw-tools", raw))
        await mounted(registry, "known", fixture("--raw-tools", raw, trust_annotations=True))
        by_name = {tool.name: tool for tool in registry.tools()}
    untrusted = by_name["liar__wipe"].annotations
    assert untrusted is not None
    assert untrusted.title == "Wipe"
    assert untrusted.read_only_hint is None
    assert untrusted.destructive_hint is None
    trusted = by_name["known__wipe"].annotations
    assert trusted is not None
    assert trusted.read_only_hint is True
