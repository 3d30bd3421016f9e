"""The ``tool_search`` meta-tool: its definition, and one call of it against an index.

Its answer is JSON definitions by default; ``"format": "python"`` answers with the found
tools' Python stubs, and ``describe:<namespace>`` finds a whole namespace
(`mcpmount.search._describe`).
"""

from __future__ import annotations

import json
from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio.to_thread
import mcp_types

from mcpmount.search._describe import describe, is_describe, python_stubs
from mcpmount.search._index import DEFAULT_LIMIT, MAX_LIMIT, SearchIndex
from mcpmount.search._result import SearchResult

__all__ = [
    "TOOL_SEARCH_NAME",
    "ToolSearchCall",
    "call_tool_search",
    "run_tool_search",
    "tool_search_definition",
]

TOOL_SEARCH_NAME: Final = "tool_search"
"""The public name of the meta-tool."""

FORMATS: Final = ("json", "python")
"""The values of ``tool_search``'s ``format`` argument; the first is the default."""


def tool_search_definition(
    max_limit: int = MAX_LIMIT, *, code_mode: bool = False
) -> mcp_types.Tool:
    """Return the definition of the ``tool_search`` meta-tool.

    Args:
        max_limit: The largest ``limit`` the schema allows (at most `MAX_LIMIT`).
        code_mode: Whether ``run_code`` is offered: the schema then shows the ``format``
            argument, whose ``"python"`` answers with the functions a program calls. (The
            argument is read either way; without code mode it is just not advertised.)
    """
    max_limit = max(1, min(max_limit, MAX_LIMIT))
    properties: dict[str, Any] = {
        "query": {
            "type": "string",
            "description": (
                'Keywords, "select:name_a,name_b", "describe:namespace", or keywords with '
                '"+required" words.'
            ),
        },
        "limit": {
            "type": "integer",
            "description": "How many tools to return at most.",
            "default": min(DEFAULT_LIMIT, max_limit),
            "minimum": 1,
            "maximum": max_limit,
        },
    }
    description = (
        "Search the tools that are available but not loaded yet, and load the best "
        "matches. Call it before saying that no tool can do something. Returns the full "
        "definitions (name, description, input schema) of the matching tools, best first; "
        "every returned tool can be called right away.\n"
        "Query forms:\n"
        '- keywords naming the action and the object, e.g. "stop virtual machine" or '
        '"list pull requests"; a tool\'s exact name ranks that tool first;\n'
        '- "select:name_a,name_b" loads exactly those tools by name, in that order;\n'
        '- "describe:github" returns every tool of the github server (limit does not apply);\n'
        '- "+word" requires a word, e.g. "+github issue" for issue tools of the '
        "github server (server names are words of the tool names)."
    )
    if code_mode:
        properties["format"] = {
            "type": "string",
            "enum": list(FORMATS),
            "default": FORMATS[0],
            "description": (
                '"python": the found tools as the Python functions run_code programs '
                "call (signatures and docstrings) instead of JSON definitions."
            ),
        }
        description += (
            '\nWith "format": "python" the answer is the Python signatures of the tools '
            "as run_code programs import them (from tools import <server>): read those "
            'instead of JSON schemas, e.g. {"query": "describe:github", "format": "python"}.'
        )
    return mcp_types.Tool(
        name=TOOL_SEARCH_NAME,
        title="Search for tools",
        description=description,
        input_schema={
            "type": "object",
            "properties": properties,
            "required": ["query"],
            "additionalProperties": False,
        },
    )


@dataclass(frozen=True, slots=True)
class ToolSearchCall:
    """One ``tool_search`` call: the result the model sees and what it found."""

    result: mcp_types.CallToolResult
    """The ``tools/call`` result: the found definitions as JSON text and structured content,
    or an error result when the arguments are malformed."""

    found: SearchResult | None
    """The search itself; None when the arguments were malformed and nothing was searched."""

    activates: bool = True
    """Whether what it found joins the caller's tools list. A ``"format": "python"`` search
    does not: its reader calls the tools from a ``run_code`` program, and their JSON
    definitions in every later turn would cost the tokens code mode saves."""

    @property
    def names(self) -> tuple[str, ...]:
        """The public names of the found tools, best first."""
        return () if self.found is None else tuple(hit.tool.name for hit in self.found.hits)


def call_tool_search(
    index: SearchIndex,
    arguments: Mapping[str, Any] | None,
    *,
    servers: Container[str] | None = None,
    tools: Container[str] | None = None,
) -> ToolSearchCall:
    """Run ``tool_search`` with the model's ``arguments`` against ``index``; never raises.

    ``"format": "python"`` answers with the found tools' Python stubs as text (no
    structured content); a ``describe:<namespace>`` query finds every tool of a namespace.

    ``servers``, ``tools``: search only their tools (`SearchIndex.search`); None: every tool.
    """
    args = dict(arguments or {})
    query = args.get("query")
    limit = args.get("limit", DEFAULT_LIMIT)
    form = args.get("format") or FORMATS[0]  # null, as some models send: the default
    if (
        not isinstance(query, str)
        or not isinstance(limit, int)
        or isinstance(limit, bool)
        or form not in FORMATS
    ):
        text = (
            'tool_search takes {"query": string, "limit": integer (1-20, default 5), '
            '"format": "json" or "python" (default "json")}'
        )
        error = mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)], is_error=True
        )
        return ToolSearchCall(error, None)
    if is_describe(query):
        found = describe(index, query, servers=servers, tools=tools)
    else:
        found = index.search(query, limit, servers=servers, tools=tools)
    if form == "python":
        text = python_stubs(index, found, servers=servers, tools=tools)
        result = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])
        return ToolSearchCall(result, found, activates=False)
    payload: dict[str, Any] = {"tools": [hit.tool.to_dict() for hit in found.hits]}
    if found.hint:
        payload["hint"] = found.hint
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
    )
    return ToolSearchCall(result, found)


async def run_tool_search(
    index: SearchIndex,
    arguments: Mapping[str, Any] | None,
    *,
    servers: Container[str] | None = None,
) -> ToolSearchCall:
    """`call_tool_search` for a caller on an event loop; never raises.

    With a semantic model, a query searched for the first time needs the model run on it
    (about 2 ms of one core for ten words, more for long queries and on a busy machine):
    that runs in a worker thread, so the event loop goes on serving meanwhile. The search
    itself (well under a millisecond) then runs here, on the index's owner's loop.
    """
    query = (arguments or {}).get("query")
    if isinstance(query, str) and not is_describe(query) and index.query_needs_vector(query):
        await anyio.to_thread.run_sync(index.embed_query, query)
    return call_tool_search(index, arguments, servers=servers)
