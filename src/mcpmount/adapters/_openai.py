"""Tools for the OpenAI Chat Completions API, or the Responses API with ``api="responses"``.

``tools()`` is the conversation's view (the manifest plus what its searches found), so
call it every turn; ``tool_search`` returns full definitions as JSON text, and the found
tools are in the next turn's list. ``run(tool_call)`` returns the ``{"role": "tool", ...}``
message (or the Responses ``function_call_output`` item). These APIs have no error flag on
a tool result, so an error's text starts with ``"Error: "``; images and other non-text
content become short placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import mcp_types

from mcpmount.adapters._content import (
    JSONObject,
    as_object,
    checked_name,
    parse_arguments,
    text_of,
)
from mcpmount.errors import RegistryError
from mcpmount.registry import Registry, View

__all__ = ["OpenAIAdapter", "OpenAIApi"]

OpenAIApi = Literal["chat", "responses"]


class OpenAIAdapter:
    """One conversation's tools for the OpenAI Chat Completions or Responses API.

    Args:
        source: The conversation's view, or a registry (a new view is made).
        api: ``"chat"`` (Chat Completions) or ``"responses"``.
    """

    def __init__(self, source: View | Registry, *, api: OpenAIApi = "chat") -> None:
        self.view = source.view() if isinstance(source, Registry) else source
        self.api: OpenAIApi = api

    def tools(self) -> list[JSONObject]:
        """Return this turn's tool definitions; call it again every turn.

        Raises:
            ValueError: A name is over 64 characters (see ``max_name_length``).
        """
        return [self._definition(tool) for tool in self.view.tools()]

    def _definition(self, tool: mcp_types.Tool) -> JSONObject:
        function: JSONObject = {"name": checked_name(tool.name)}
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
            call_id, fields = tool_call.get("id"), as_object(tool_call.get("function"))
        name = fields.get("name")
        call_id = str(call_id or "")
        if not isinstance(name, str):
            return self._result(call_id, "Error: the tool call has no function name")
        arguments = parse_arguments(fields.get("arguments"))
        if isinstance(arguments, str):
            return self._result(call_id, f"Error: {name}: {arguments}")
        try:
            result = await self.view.call(name, arguments)
        except RegistryError as exc:
            return self._result(call_id, f"Error: {exc}")
        text = text_of(result)
        return self._result(call_id, f"Error: {text}" if result.is_error else text)

    def _result(self, call_id: str, text: str) -> JSONObject:
        if self.api == "responses":
            return {"type": "function_call_output", "call_id": call_id, "output": text}
        return {"role": "tool", "tool_call_id": call_id, "content": text}
