"""The ``call_tool`` meta-tool: how a client calls what ``tool_search`` found but its list lacks.

Many hosts call only the tools their last ``tools/list`` showed (the MCP Inspector among
them). A handshake-era session is told when a search grows its list, but a one-shot
client (a command line that connects, lists, calls and leaves) never lists again, and a
request with no session (2026-07-28 over HTTP, ``--stateless``) cannot be told. So beside
``tool_search`` (listed when a tool is deferred) a caller sees ``call_tool``, whose
``{"name", "arguments"}`` reach the named tool as a ``tools/call`` of it would: every
caller by default, or only those without a session (``[serve] call_tool =
"sessionless"``). Any caller may call it, listed or not. ``tool_search`` answers a caller
that sees it with each found tool's name and input schema and a line saying to call them
through ``call_tool``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

import mcp_types

from mcpmount.search import TOOL_SEARCH_NAME

__all__ = [
    "CALL_TOOL_NAME",
    "CallToolArguments",
    "CallToolOffer",
    "call_tool_definition",
    "refusal",
    "search_result_via_call_tool",
    "tool_search_via_call_tool",
    "unwrap",
]

CALL_TOOL_NAME: Final = "call_tool"
"""The public name of the meta-tool (no mounted tool's name lacks ``__``, so none clashes)."""

CallToolOffer = Literal["every", "sessionless"]
"""Who sees ``call_tool`` beside ``tool_search``: every caller, or those without a session."""

_USAGE: Final = 'call_tool takes {"name": string, "arguments": object}'

_VIA: Final = (
    "The tools above may not be in your tools list: call each through call_tool, "
    'as {"name": "<its name>", "arguments": {...}} with the arguments its inputSchema asks for.'
)

_VIA_CONVERSATION: Final = (
    " They join this conversation's tools list from its next tools/list on "
    "(the Mcp-Conversation-Id header keys it)."
)


def call_tool_definition() -> mcp_types.Tool:
    """Return the definition of the ``call_tool`` meta-tool."""
    return mcp_types.Tool(
        name=CALL_TOOL_NAME,
        title="Call a found tool",
        description=(
            "Call a tool that tool_search found, by its exact name, with the arguments its "
            "input schema asks for. Use it for any found tool that is not in your tools list; "
            "the result is that tool's own."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The tool's exact name, as tool_search returned it.",
                },
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments, as its inputSchema says.",
                    "default": {},
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    )


def tool_search_via_call_tool(definition: mcp_types.Tool) -> mcp_types.Tool:
    """Return ``tool_search``'s definition as a caller that sees ``call_tool`` sees it."""
    description = (definition.description or "") + (
        "\nHere, call a found tool through call_tool unless your tools list shows it."
    )
    return definition.model_copy(update={"description": description})


@dataclass(frozen=True, slots=True)
class CallToolArguments:
    """A well-formed ``call_tool`` call: the tool it names and that tool's arguments."""

    name: str
    arguments: dict[str, Any] | None


def unwrap(arguments: Mapping[str, Any] | None) -> CallToolArguments | mcp_types.CallToolResult:
    """Read ``call_tool``'s arguments; a malformed or recursive call gets an error result."""
    args = dict(arguments or {})
    name = args.get("name")
    inner = args.get("arguments")
    if not isinstance(name, str) or (inner is not None and not isinstance(inner, dict)):
        return refusal(_USAGE)
    if set(args) - {"name", "arguments"}:
        extra = ", ".join(sorted(set(args) - {"name", "arguments"}))
        return refusal(f"{_USAGE}; it got {extra} too (put the tool's arguments in arguments)")
    if name in (CALL_TOOL_NAME, TOOL_SEARCH_NAME):
        return refusal(
            f"call_tool calls the tools tool_search found, not {name}: call {name} itself"
        )
    return CallToolArguments(name, cast("dict[str, Any] | None", inner))


def refusal(text: str) -> mcp_types.CallToolResult:
    """An error result the model reads: nothing was called."""
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=True
    )


def search_result_via_call_tool(
    result: mcp_types.CallToolResult, *, conversation: bool
) -> mcp_types.CallToolResult:
    """Add to a ``tool_search`` result that found tools are called through ``call_tool``.

    The found definitions (name, description, input schema) stay as they are; an error
    result (malformed arguments) and a search that found nothing are returned unchanged.
    """
    payload = result.structured_content
    if result.is_error or payload is None or not payload.get("tools"):
        return result
    payload = {**payload, "call_with": CALL_TOOL_NAME}
    payload["note"] = _VIA + (_VIA_CONVERSATION if conversation else "")
    text = json.dumps(payload, ensure_ascii=False)
    return result.model_copy(
        update={
            "content": [mcp_types.TextContent(type="text", text=text)],
            "structured_content": payload,
        }
    )
