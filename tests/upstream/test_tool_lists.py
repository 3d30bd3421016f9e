"""Untrusted tool lists: a hostile, unparseable or oversized list refuses its server.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fault_support import raw
from mcpmount.errors import ServerStartError, ToolListError
from mcpmount.registry import Registry
from support import fixture, record_pids

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def tools_json(tools: list[dict[str, object]]) -> str:
    return json.dumps({"tools": tools})


def _nested(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _tool(name: str, **fields: object) -> dict[str, object]:
    return {"name": name, "inputSchema": {"type": "object"}} | fields


HOSTILE_LISTS = [
    pytest.param([_tool("a\u0000b")], "SEP-986", id="nul"),
    pytest.param([_tool("evil\u202etxt")], "SEP-986", id="bidi-override"),
    pytest.param([_tool("zero\u200bwidth")], "SEP-986", id="zwsp"),
    pytest.param([_tool("")], "SEP-986", id="empty"),
    pytest.param([_tool("a b/c;rm -rf")], "SEP-986", id="shell"),
    pytest.param([_tool("x" * 300)], "SEP-986", id="300-chars"),
    pytest.param([_tool("a"), _tool("a")], "listed twice", id="duplicate"),
    pytest.param(
        [_tool("a", inputSchema={"type": "string"})], "tools.0.inputSchema", id="non-object"
    ),
    pytest.param([_tool("ok"), {"name": "b"}], "tools.1.inputSchema", id="missing-schema"),
    pytest.param([_tool("a", inputSchema=_nested(40))], "max_schema_depth", id="depth-80"),
    pytest.param([_tool("a", description="d" * 9000)], "max_description_bytes", id="9-kib-desc"),
    pytest.param(
        [_tool("a", inputSchema={"type": "object", "properties": {"x": {"type": "bogus"}}})],
        "not a valid JSON Schema",
        id="bogus-type",
    ),
]


class TestToolLists:
    @pytest.mark.parametrize(("tools", "problem"), HOSTILE_LISTS)
    async def test_a_hostile_tool_list_refuses_the_server(
        self, tools: list[dict[str, object]], problem: str
    ) -> None:
        """Each hostile list refuses the server, naming it; nothing is registered."""
        async with Registry() as registry:
            with pytest.raises((ToolListError, ServerStartError), match=problem) as caught:
                await registry.mount("hostile", raw(tools_json(tools)))
            assert caught.value.server == "hostile"
            assert registry.mounted_tools() == []

    @pytest.mark.parametrize(
        "listing",
        [
            pytest.param(
                r'{"tools": [{"name": "a\ud800", "inputSchema": {"type": "object"}}]}',
                id="lone-surrogate",
            ),
            pytest.param(tools_json([_tool("a", inputSchema=_nested(100))]), id="depth-200"),
        ],
    )
    async def test_an_unparseable_list_fails_fast_instead_of_hanging(self, listing: str) -> None:
        """An answer pydantic drops whole fails at once, saying so, not at the timeout."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="could not parse the server's answer"):
                await registry.mount("odd", raw(listing, startup_timeout=20))
            assert time.perf_counter() - began < 5
            assert registry.mounted_tools() == []

    async def test_ten_thousand_tools_exceed_max_tools(self, tmp_path: Path) -> None:
        """10,000 tools in one page refuse the server (max_tools = 1000)."""
        listing = tmp_path / "list.json"
        listing.write_text(tools_json([_tool(f"t{i}") for i in range(10_000)]))
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 1000 tools \(max_tools\)"):
                await registry.mount("many", raw(str(listing)))
            assert registry.mounted_tools() == []

    async def test_a_per_server_max_tools_overrides_the_registry(self) -> None:
        """With max_tools = 5 on one server, 6 tools refuse it; another server is unaffected."""
        names = json.dumps([f"t{i}" for i in range(6)])
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"more than 5 tools"):
                await registry.mount("capped", fixture("--names", names, max_tools=5))
            await registry.mount("open", fixture("--names", names))
            record_pids(registry)
            assert len(registry.mounted_tools()) == 6

    async def test_a_thousand_pages_exceed_max_pages(self, tmp_path: Path) -> None:
        """A list of 1,000 one-tool pages stops at max_pages (100)."""
        names = tmp_path / "names.json"
        names.write_text(json.dumps([f"t{i}" for i in range(1000)]))
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"past 100 pages \(max_pages\)"):
                await registry.mount("pages", fixture("--names", str(names), "--page-size", "1"))
            assert registry.mounted_tools() == []

    async def test_a_repeating_cursor_is_detected(self) -> None:
        """A nextCursor that never changes is refused, not followed forever."""
        names = json.dumps(["a", "b"])
        async with Registry() as registry:
            with pytest.raises(ToolListError, match="cursor repeats"):
                await registry.mount(
                    "loop", fixture("--names", names, "--page-size", "1", "--loop-cursor")
                )
            assert registry.mounted_tools() == []
