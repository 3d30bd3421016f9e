"""Tools for the Anthropic Messages API.

``tools()`` holds *every* tool; deferred ones carry ``"defer_loading": true``, so the
list (and the prompt cache) stays the same all conversation. The default search is our
own ``tool_search`` as a client tool, whose result is ``tool_reference`` blocks: the API
expands each into the deferred definition (Anthropic's "custom tool search" path). We
default to it because it is the same ranking the MCP server and the command line use
(BM25F over names, titles, descriptions and argument names, exact names first,
``select:`` and ``+word``), it is deterministic and runs offline, and client tools are
ZDR-eligible. ``search="bm25"`` or ``"regex"`` uses Anthropic's server-side
``tool_search_tool_bm25_20251119`` / ``tool_search_tool_regex_20251119`` instead, and
leaves ours out. ``run(tool_use)`` returns a ``tool_result`` block with ``is_error``;
images (and PDF resources) stay images (and documents).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import mcp_types

from mcpmount.adapters._content import (
    JSONObject,
    as_object,
    block_text,
    checked_name,
    structured_text,
    text_block,
)
from mcpmount.errors import RegistryError
from mcpmount.registry import Registry, View
from mcpmount.search import TOOL_SEARCH_NAME, SearchResult

__all__ = ["AnthropicAdapter", "AnthropicSearch"]

AnthropicSearch = Literal["mcpmount", "bm25", "regex"]

_ANTHROPIC_SEARCH_TOOLS: Final[Mapping[str, Mapping[str, str]]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


class AnthropicAdapter:
    """One conversation's tools for the Anthropic Messages API.

    Args:
        source: The conversation's view, or a registry (a new view is made).
        search: ``"mcpmount"`` (default): our ``tool_search`` as a client tool returning
            ``tool_reference`` blocks. ``"bm25"`` / ``"regex"``: Anthropic's
            server-side tool search tool.
    """

    def __init__(self, source: View | Registry, *, search: AnthropicSearch = "mcpmount") -> None:
        self.view = source.view() if isinstance(source, Registry) else source
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
            definitions.append(_definition(tool))
        shown = {tool.name for tool in manifest}
        deferred = [t for t in registry.mounted_tools() if t.name not in shown]
        definitions += [
            _definition(registry.definition(entry.name)) | {"defer_loading": True}
            for entry in deferred
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
        arguments = as_object(given)
        if not isinstance(name, str):
            return _tool_result(tool_use_id, [text_block("the tool_use block has no name")], True)
        if not isinstance(given, Mapping):
            message = f"{name}: the input must be a JSON object"
            return _tool_result(tool_use_id, [text_block(message)], True)
        if name == TOOL_SEARCH_NAME:
            search = await self.view.run_tool_search(arguments)
            if search.found is not None:
                return _tool_result(tool_use_id, self._references(search.found), False)
            result = search.result
        else:
            try:
                result = await self.view.call(name, arguments)
            except RegistryError as exc:
                return _tool_result(tool_use_id, [text_block(str(exc))], True)
        return _tool_result(tool_use_id, _content(result), result.is_error)

    def _references(self, found: SearchResult) -> list[JSONObject]:
        """Turn our search hits into ``tool_reference`` blocks for the deferred ones."""
        listed = {tool.name for tool in self.view.registry.tools()}
        hits = [hit.tool.name for hit in found.hits]
        hint = found.hint or ""
        deferred = [name for name in hits if name not in listed]
        if deferred:
            # Only references: the API expands each into the tool's deferred definition.
            return [{"type": "tool_reference", "tool_name": name} for name in deferred]
        if hits:
            return [text_block(f"Already in your tool list: {', '.join(hits)}")]
        return [text_block(hint or "No tool matched; try other words.")]


def _definition(tool: mcp_types.Tool) -> JSONObject:
    definition: JSONObject = {"name": checked_name(tool.name)}
    if tool.description:
        definition["description"] = tool.description
    definition["input_schema"] = dict(tool.input_schema)
    return definition


def _tool_result(tool_use_id: str, content: list[JSONObject], is_error: bool) -> JSONObject:
    block: JSONObject = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def _content(result: mcp_types.CallToolResult) -> list[JSONObject]:
    """A result's content as Messages API blocks: images and PDFs as such, the rest as text."""
    structured = structured_text(result)
    if structured is not None:
        return [text_block(structured)]
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
            blocks.append(text_block(block_text(block)))
    return blocks or [text_block("")]
