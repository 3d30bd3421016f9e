"""What both model-API adapters share: JSON shapes, the name limit, arguments, content as text.

The model's output is untrusted: arguments that are not a JSON object become a message
for the model, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final, cast

import mcp_types

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "JSONObject",
    "as_object",
    "block_text",
    "checked_name",
    "parse_arguments",
    "structured_text",
    "text_block",
    "text_of",
]

JSONObject = dict[str, object]
"""A JSON object as the model APIs send and take it."""

MAX_TOOL_NAME_LENGTH: Final = 64
"""The longest tool name the OpenAI and Anthropic APIs accept."""


def checked_name(name: str) -> str:
    """Return ``name``, or raise `ValueError` if the model APIs would reject it as too long."""
    if len(name) > MAX_TOOL_NAME_LENGTH:
        raise ValueError(
            f"tool name {name!r} is {len(name)} characters, over the model APIs' limit of "
            f"{MAX_TOOL_NAME_LENGTH}; set max_name_length = {MAX_TOOL_NAME_LENGTH} in [registry]"
        )
    return name


def text_block(text: str) -> JSONObject:
    """A ``{"type": "text"}`` content block."""
    return {"type": "text", "text": text}


def as_object(value: object) -> Mapping[str, object]:
    """``value`` if it is a JSON object, else an empty one: model output is untrusted."""
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else {}


def parse_arguments(raw: object) -> Mapping[str, object] | str:
    """Return the arguments, or a message saying why the model's JSON is unusable."""
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        if isinstance(raw, Mapping):
            return cast("Mapping[str, object]", raw)
        return "the arguments must be a JSON object"
    try:
        value: object = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"the arguments are not valid JSON ({exc}); send a JSON object"
    if not isinstance(value, dict):
        return "the arguments must be a JSON object"
    return cast("dict[str, object]", value)


def block_text(block: mcp_types.ContentBlock) -> str:
    """One content block as text, for APIs (and places) that take only text."""
    match block:
        case mcp_types.TextContent():
            return block.text
        case mcp_types.ImageContent() | mcp_types.AudioContent():
            return (
                f"[{block.type} {block.mime_type}: {len(block.data)} base64 characters not shown]"
            )
        case mcp_types.ResourceLink():
            return f"[resource {block.uri}" + (
                f": {block.description}]" if block.description else "]"
            )
        case mcp_types.EmbeddedResource():
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                return resource.text
            return f"[resource {resource.uri} ({resource.mime_type or 'binary'}) not shown]"
        case _:
            return json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True))


def structured_text(result: mcp_types.CallToolResult) -> str | None:
    """A result's structured content as JSON text, when it is all the result has."""
    if not result.content and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return None


def text_of(result: mcp_types.CallToolResult) -> str:
    """A result as one text: its blocks, or its structured content when it has no blocks."""
    structured = structured_text(result)
    if structured is not None:
        return structured
    return "\n".join(block_text(block) for block in result.content)
