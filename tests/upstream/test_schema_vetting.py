"""Tool schemas are vetted once per distinct schema, per registry, with the same verdicts.

A schema whose ``$schema`` names no known metaschema makes ``jsonschema`` warn each time it
picks a validator for it: the tests count those warnings to see, from outside, how often a
registry really checked a schema.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

import anyio
import jsonschema
import mcp_types
import pytest
from jsonschema.validators import validator_for
from mcp.server.mcpserver import MCPServer

from fault_support import raw
from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.errors import ToolListError
from mcpmount.registry import Registry
from mcpmount.transports import MemoryTransport
from mcpmount.upstream import Connection, SchemaVetting

pytestmark = pytest.mark.usefixtures("no_leaks")

UNKNOWN_METASCHEMA = {"$schema": "urn:example:no-such-metaschema", "type": "object"}
BOGUS = {"type": "object", "properties": {"x": {"type": "bogus"}}}

SCHEMAS: list[Any] = [
    {"type": "object"},
    {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}},
    BOGUS,
    {"type": "object", "required": "x"},
    {"type": "object", "properties": {"x": {"enum": 3}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "minimum": "0"},
    {"type": "object", "$defs": {"a": {"anyOf": [{"type": "string"}, {"maxLength": -1}]}}},
]


def today(schema: Any) -> str | None:
    """The verdict as ``jsonschema``'s own ``check_schema`` gives it."""
    try:
        validator_for(schema).check_schema(schema)  # pyright: ignore[reportUnknownMemberType]
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "the top level"
        message = exc.message if len(exc.message) <= 200 else exc.message[:200] + "..."
        return f"at {where}: {message}"
    return None


def tools_json(*schemas: Mapping[str, object]) -> str:
    tools = [{"name": f"t{i}", "inputSchema": s} for i, s in enumerate(schemas)]
    return json.dumps({"tools": tools})


class TestVerdicts:
    @pytest.mark.parametrize("schema", SCHEMAS)
    def test_a_verdict_is_the_one_check_schema_gives(self, schema: Any) -> None:
        """Fresh or remembered, the verdict is what ``check_schema`` says of the schema."""
        vetting = SchemaVetting()
        assert vetting.problem(schema) == today(schema)
        assert vetting.problem(schema) == today(schema)
        assert (vetting.checked, vetting.reused) == (1, 1)

    def test_key_order_does_not_make_a_schema_distinct(self) -> None:
        """The same schema with its keys in another order is answered from the kept verdict."""
        vetting = SchemaVetting()
        vetting.problem({"type": "object", "properties": {"a": {"type": "string"}}})
        vetting.problem({"properties": {"a": {"type": "string"}}, "type": "object"})
        assert (vetting.checked, vetting.reused) == (1, 1)

    def test_schemas_that_differ_only_in_a_value_are_distinct(self) -> None:
        """1 and 1.0, "1" and 1, true and 1: each one is checked on its own."""
        vetting = SchemaVetting()
        for value in (1, 1.0, "1", True):
            vetting.problem({"type": "object", "default": value})
        assert (vetting.checked, vetting.reused) == (4, 0)

    def test_it_keeps_at_most_max_verdicts_dropping_the_least_recently_used(self) -> None:
        """Past the bound the least recently used verdict goes; 0 keeps none."""
        vetting = SchemaVetting(max_verdicts=2)
        a, b, c = ({"type": "object", "title": t} for t in "abc")
        for schema in (a, b, a, c):  # c evicts b, the least recently used
            vetting.problem(schema)
        assert len(vetting) == 2
        vetting.problem(a)
        assert vetting.checked == 3
        vetting.problem(b)
        assert vetting.checked == 4
        none_kept = SchemaVetting(max_verdicts=0)
        none_kept.problem(a)
        none_kept.problem(a)
        assert (none_kept.checked, len(none_kept)) == (2, 0)


def shared_schema_server(tools: int) -> MCPServer:
    """An in-process server whose ``tools`` tools all share one input and one output schema."""
    server = MCPServer("shared")

    def make(i: int) -> Any:
        def shared(x: int = 0) -> str:
            return f"{i}:{x}"

        return shared

    for i in range(tools):
        server.add_tool(make(i), name=f"tool_{i}")
    return server


async def test_a_schema_shared_by_many_tools_is_checked_once() -> None:
    """40 tools over two connections, two distinct schemas: two checks, every other reused."""
    vetting = SchemaVetting()
    spec = StdioServer(command="in-memory")
    listed: list[mcp_types.Tool] = []
    async with anyio.create_task_group() as tg:
        for name in ("a", "b"):
            transport = MemoryTransport(shared_schema_server(20))
            connection = Connection(
                name, spec, RegistrySettings(), use_transport=transport, schemas=vetting
            )
            await tg.start(connection.run)
            listed += connection.tools
            await connection.aclose()
    distinct = {
        json.dumps(s, sort_keys=True)
        for tool in listed
        for s in (tool.input_schema, tool.output_schema)
    }
    assert (len(listed), len(distinct)) == (40, 2)
    assert (vetting.checked, vetting.reused) == (2, 78)


@pytest.mark.parametrize("key", ["inputSchema", "outputSchema"])
async def test_an_invalid_schema_is_refused_with_the_same_error_every_time(key: str) -> None:
    """Checked or remembered, an invalid schema refuses its server as check_schema words it."""
    tool = {"name": "bad", "inputSchema": {"type": "object"}} | {key: BOGUS}
    listing = json.dumps({"tools": [tool]})
    expected = f"its {key} is not a valid JSON Schema ({today(BOGUS)})"
    async with Registry() as registry:
        for server in ("first", "second"):
            with pytest.raises(ToolListError) as caught:
                await registry.mount(server, raw(listing))
            assert caught.value.server == server
            assert caught.value.tool == "bad"
            assert expected in str(caught.value)
        assert registry.mounted_tools() == []


async def test_two_registries_do_not_share_their_verdicts() -> None:
    """Each registry checks a schema once, however many of its tools and servers list it."""
    listing = tools_json(UNKNOWN_METASCHEMA, UNKNOWN_METASCHEMA, UNKNOWN_METASCHEMA)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            async with Registry() as registry:
                await registry.mount("one", raw(listing))
                await registry.mount("two", raw(listing))
                assert len(registry.mounted_tools()) == 6
    checks = [w for w in caught if "metaschema specified by $schema" in str(w.message)]
    assert len(checks) == 2
