"""The ``tool_search`` meta-tool: its schema, and one call of it against an index."""

from __future__ import annotations

import json

import mcp_types
import pytest
from search_support import make

from mcpmount.search import (
    MAX_LIMIT,
    TOOL_SEARCH_NAME,
    SearchIndex,
    call_tool_search,
    tool_search_definition,
)


def test_the_meta_tool_schema_takes_a_query_and_a_bounded_limit() -> None:
    """``tool_search`` requires ``query`` and allows ``limit`` 1..20, default 5."""
    tool = tool_search_definition()
    assert tool.name == TOOL_SEARCH_NAME == "tool_search"
    assert tool.description is not None
    for form in ("select:", "+"):
        assert form in tool.description
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"]["type"] == "string"
    limit = schema["properties"]["limit"]
    assert (limit["type"], limit["default"], limit["minimum"], limit["maximum"]) == (
        "integer",
        5,
        1,
        MAX_LIMIT,
    )
    assert tool_search_definition(max_limit=8).input_schema["properties"]["limit"]["maximum"] == 8


@pytest.fixture(name="index")
def _index() -> SearchIndex:
    index = SearchIndex()
    index.add(
        [
            make("cloud", "stop_instance", "Stop a running virtual machine instance."),
            make("fs", "read_file", "Read the complete contents of a file.", {"path": "File"}),
        ]
    )
    return index


def test_a_call_returns_the_found_definitions_as_text_and_structured_content(
    index: SearchIndex,
) -> None:
    """The result carries the tools in the list_tools shape, best first, both ways."""
    call = call_tool_search(index, {"query": "halt the vm", "limit": 1})
    assert call.names == ("cloud__stop_instance",)
    assert call.found is not None
    assert not call.result.is_error
    payload = call.result.structured_content
    assert payload is not None
    assert [tool["name"] for tool in payload["tools"]] == ["cloud__stop_instance"]
    assert "inputSchema" in payload["tools"][0]
    [block] = call.result.content
    assert isinstance(block, mcp_types.TextContent)
    assert json.loads(block.text) == payload


def test_a_call_that_finds_nothing_passes_the_hint_on(index: SearchIndex) -> None:
    """No hits is not an error: the payload says what to try instead."""
    call = call_tool_search(index, {"query": "zebra quokka"})
    assert call.names == ()
    assert call.result.structured_content is not None
    assert call.result.structured_content["tools"] == []
    assert call.result.structured_content["hint"]


@pytest.mark.parametrize(
    "arguments",
    [None, {}, {"query": 3}, {"query": "vm", "limit": "2"}, {"query": "vm", "limit": True}],
)
def test_malformed_arguments_give_an_error_result_and_search_nothing(
    index: SearchIndex, arguments: dict[str, object] | None
) -> None:
    """The model sees how to call it; nothing was searched."""
    call = call_tool_search(index, arguments)
    assert call.found is None
    assert call.names == ()
    assert call.result.is_error
    [block] = call.result.content
    assert isinstance(block, mcp_types.TextContent)
    assert '"query": string' in block.text
