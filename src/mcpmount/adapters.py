"""Hand the registry's tools to model APIs, and their tool calls back to the registry.

No SDK of either vendor is imported: definitions, calls and results are the plain JSON
dicts the HTTP APIs take, so this works with the official clients, with raw HTTP and
with scripted models alike.

`OpenAIAdapter` (Chat Completions, or the Responses API with ``api="responses"``):
    ``tools()`` is the conversation's view (the manifest plus what its searches found),
    so call it every turn; ``tool_search`` returns full definitions as JSON text, and
    the found tools are in the next turn's list. ``run(tool_call)`` returns the
    ``{"role": "tool", ...}`` message (or the Responses ``function_call_output`` item).
    These APIs have no error flag on a tool result, so an error's text starts with
    ``"Error: "``.

`AnthropicAdapter` (Messages API):
    ``tools()`` holds *every* tool; deferred ones carry ``"defer_loading": true``, so
    the list (and the prompt cache) stays the same all conversation. The default search
    is our own ``tool_search`` as a client tool, whose result is ``tool_reference``
    blocks: the API expands each into the deferred definition (Anthropic's "custom
    tool search" path). We default to it because it is the same ranking the MCP server
    and the command line use (BM25F over names, titles, descriptions and argument
    names, exact names first, ``select:`` and ``+word``), it is deterministic and runs
    offline, and client tools are ZDR-eligible. ``search="bm25"`` or ``"regex"`` uses
    Anthropic's server-side ``tool_search_tool_bm25_20251119`` /
    ``tool_search_tool_regex_20251119`` instead, and leaves ours out.
    ``run(tool_use)`` returns a ``tool_result`` block with ``is_error``.

Errors: a registry failure (unknown tool, timeout, crash, server not running, result too
large, upstream JSON-RPC error) becomes an error result whose text names the server and
the tool, so the model sees it and can recover; malformed arguments from the model do
too. Content: text stays text; images are images where the API takes them (Anthropic)
and a short placeholder elsewhere; embedded text resources become text; links become
their URI; a result with only structured content is sent as its JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final, Literal, cast

import mcp_types

from mcpmount.errors import RegistryError
from mcpmount.registry import Registry, View
from mcpmount.search import TOOL_SEARCH_NAME, SearchResult

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "AnthropicAdapter",
    "AnthropicSearch",
    "JSONObject",
    "OpenAIAdapter",
    "OpenAIApi",
]

JSONObject = dict[str, object]
"""A JSON object as the model APIs send and take it."""

OpenAIApi = Literal["chat", "responses"]
AnthropicSearch = Literal["mcpmount", "bm25", "regex"]

MAX_TOOL_NAME_LENGTH: Final = 64
"""The longest tool name the OpenAI and Anthropic APIs accept."""

_ANTHROPIC_SEARCH_TOOLS: Final[dict[str, JSONObject]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def _view_of(source: View | Registry) -> View:
    return source.view() if isinstance(source, Registry) else source


def _checked_name(name: str) -> str:
    if len(name) > MAX_TOOL_NAME_LENGTH:
        raise ValueError(
            f"tool name {name!r} is {len(name)} characters, over the model APIs' limit of "
            f"{MAX_TOOL_NAME_LENGTH}; set max_name_length = {MAX_TOOL_NAME_LENGTH} in [registry]"
        )
    return name


class OpenAIAdapter:
    """One conversation's tools for the OpenAI Chat Completions or Responses API.

    Args:
        source: The conversation's view, or a registry (a new view is made).
        api: ``"chat"`` (Chat Completions) or ``"responses"``.
    """

    def __init__(self, source: View | Registry, *, api: OpenAIApi = "chat") -> None:
        self.view = _view_of(source)
        self.api: OpenAIApi = api

    def tools(self) -> list[JSONObject]:
        """Return this turn's tool definitions; call it again every turn.

        Raises:
            ValueError: A name is over 64 characters (see ``max_name_length``).
        """
        return [self._definition(tool) for tool in self.view.tools()]

    def _definition(self, tool: mcp_types.Tool) -> JSONObject:
        function: JSONObject = {"name": _checked_name(tool.name)}
        if tool.description:
            function["description"] = tool.description
        function["parameters"] = dict(tool.input_schema)
        if self.api == "responses":
            return {"type": "function", **function}
        return {"type": "function", "function": function}

    async def run(self, tool_call: Mapping[str, object]) -> JSONObject:
        """Run one tool call of the model's; return the message (or item) to append.

        Args:
            tool_call: Chat: an item of ``message.tool_calls``
                (``{"id", "type": "function", "function": {"name", "arguments"}}``).
                Responses: a ``{"type": "function_call", "call_id", "name", "arguments"}``
                output item. ``arguments`` is the model's JSON text.
        """
        if self.api == "responses":
            call_id, fields = tool_call.get("call_id"), tool_call
        else:
            call_id, fields = tool_call.get("id"), _as_object(tool_call.get("function"))
        name = fields.get("name")
        call_id = str(call_id or "")
        if not isinstance(name, str):
            return self._result(call_id, "Error: the tool call has no function name")
        arguments = _parse_arguments(fields.get("arguments"))
        if isinstance(arguments, str):
            return self._result(call_id, f"Error: {name}: {arguments}")
        try:
            result = await self.view.call(name, arguments)
        except RegistryError as exc:
            return self._result(call_id, f"Error: {exc}")
        text = _text_of(result)
        return self._result(call_id, f"Error: {text}" if result.is_error else text)

    def _result(self, call_id: str, text: str) -> JSONObject:
        if self.api == "responses":
            return {"type": "function_call_output", "call_id": call_id, "output": text}
        return {"role": "tool", "tool_call_id": call_id, "content": text}


class AnthropicAdapter:
    """One conversation's tools for the Anthropic Messages API.

    Args:
        source: The conversation's view, or a registry (a new view is made).
        search: ``"mcpmount"`` (default): our ``tool_search`` as a client tool returning
            ``tool_reference`` blocks. ``"bm25"`` / ``"regex"``: Anthropic's
            server-side tool search tool.
    """

    def __init__(self, source: View | Registry, *, search: AnthropicSearch = "mcpmount") -> None:
        self.view = _view_of(source)
        self.search: AnthropicSearch = search

    def tools(self) -> list[JSONObject]:
        """Return every tool, deferred ones with ``defer_loading``, plus a search tool.

        The list does not change as the conversation searches, so it can be cached.

        Raises:
            ValueError: A name is over 64 characters (see ``max_name_length``).
        """
        registry = self.view.registry
        manifest = registry.tools()
        definitions: list[JSONObject] = []
        for tool in manifest:
            if tool.name == TOOL_SEARCH_NAME and self.search != "mcpmount":
                continue
            definitions.append(_anthropic_definition(tool))
        shown = {tool.name for tool in manifest}
        deferred = [t for t in registry.mounted_tools() if t.name not in shown]
        definitions += [
            _anthropic_definition(entry.to_mcp()) | {"defer_loading": True} for entry in deferred
        ]
        if deferred and self.search != "mcpmount":
            definitions.insert(0, dict(_ANTHROPIC_SEARCH_TOOLS[self.search]))
        return definitions

    async def run(self, tool_use: Mapping[str, object]) -> JSONObject:
        """Run one ``tool_use`` block of the model's; return its ``tool_result`` block.

        Put the result in the next ``user`` message's content. A ``tool_search`` (ours)
        answers with ``tool_reference`` blocks for the deferred tools it found.
        """
        tool_use_id = str(tool_use.get("id") or "")
        name = tool_use.get("name")
        given = tool_use.get("input", {})
        arguments = _as_object(given)
        if not isinstance(name, str):
            return _tool_result(tool_use_id, [_text("the tool_use block has no name")], True)
        if not isinstance(given, Mapping):
            message = f"{name}: the input must be a JSON object"
            return _tool_result(tool_use_id, [_text(message)], True)
        if name == TOOL_SEARCH_NAME:
            search = self.view.tool_search(arguments)
            if search.found is not None:
                return _tool_result(tool_use_id, self._references(search.found), False)
            result = search.result
        else:
            try:
                result = await self.view.call(name, arguments)
            except RegistryError as exc:
                return _tool_result(tool_use_id, [_text(str(exc))], True)
        return _tool_result(tool_use_id, _anthropic_content(result), result.is_error)

    def _references(self, found: SearchResult) -> list[JSONObject]:
        """Turn our search hits into ``tool_reference`` blocks for the deferred ones."""
        visible = {tool.name for tool in self.view.registry.tools()}
        hits = [hit.tool.name for hit in found.hits]
        hint = found.hint or ""
        deferred = [name for name in hits if name not in visible]
        if deferred:
            # Only references: the API expands each into the tool's deferred definition.
            return [{"type": "tool_reference", "tool_name": name} for name in deferred]
        if hits:
            return [_text(f"Already in your tool list: {', '.join(hits)}")]
        return [_text(hint or "No tool matched; try other words.")]


def _anthropic_definition(tool: mcp_types.Tool) -> JSONObject:
    definition: JSONObject = {"name": _checked_name(tool.name)}
    if tool.description:
        definition["description"] = tool.description
    definition["input_schema"] = dict(tool.input_schema)
    return definition


def _tool_result(tool_use_id: str, content: list[JSONObject], is_error: bool) -> JSONObject:
    block: JSONObject = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def _text(text: str) -> JSONObject:
    return {"type": "text", "text": text}


def _as_object(value: object) -> Mapping[str, object]:
    """``value`` if it is a JSON object, else an empty one: model output is untrusted."""
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else {}


def _parse_arguments(raw: object) -> Mapping[str, object] | str:
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


def _block_text(block: mcp_types.ContentBlock) -> str:
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


def _text_of(result: mcp_types.CallToolResult) -> str:
    """A result as one text: its blocks, or its structured content when it has no blocks."""
    if not result.content and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(_block_text(block) for block in result.content)


def _anthropic_content(result: mcp_types.CallToolResult) -> list[JSONObject]:
    if not result.content and result.structured_content is not None:
        return [_text(json.dumps(result.structured_content, ensure_ascii=False))]
    blocks: list[JSONObject] = []
    for block in result.content:
        if isinstance(block, mcp_types.ImageContent):
            source: JSONObject = {
                "type": "base64",
                "media_type": block.mime_type,
                "data": block.data,
            }
            blocks.append({"type": "image", "source": source})
        elif (
            isinstance(block, mcp_types.EmbeddedResource)
            and isinstance(block.resource, mcp_types.BlobResourceContents)
            and block.resource.mime_type == "application/pdf"
        ):
            source = {
                "type": "base64",
                "media_type": "application/pdf",
                "data": block.resource.blob,
            }
            blocks.append({"type": "document", "source": source})
        else:
            blocks.append(_text(_block_text(block)))
    return blocks or [_text("")]
