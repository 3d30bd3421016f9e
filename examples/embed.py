"""An agent loop that embeds the registry, with a scripted model standing in for an LLM.

Run it from the repository root:  python examples/embed.py [configs/demo.toml]

Each turn the "model" sees `view.tools()` (the manifest plus whatever its searches found),
and answers with either a tool call or a final message. A real agent puts an LLM API call
where `ScriptedModel.respond` is; everything else stays as it is.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types

import mcpmount


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class ScriptedModel:
    """Plays back a fixed plan: find a deferred tool through search, call it, then answer."""

    plan: list[ToolCall] = field(
        default_factory=lambda: [
            ToolCall("notes__add_note", {"title": "standup", "body": "ship the registry"}),
            ToolCall("tool_search", {"query": "convert a time between time zones", "limit": 3}),
            ToolCall(
                "clock__convert_time",
                {
                    "time": "2026-11-29T09:00",
                    "from_timezone": "Europe/Paris",
                    "to_timezone": "Asia/Tokyo",
                },
            ),
            ToolCall("notes__search_notes", {"query": "registry"}),
        ]
    )

    def respond(self, tools: list[mcp_types.Tool], transcript: list[str]) -> ToolCall | str:
        if not self.plan:
            return f"Done after {len(transcript)} tool results."
        call = self.plan.pop(0)
        visible = {tool.name for tool in tools}
        # A model can only call what it was shown (or what tool_search just returned).
        assert call.name in visible, f"the model was never shown {call.name}"
        return call


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


async def run_agent(config: str) -> list[str]:
    """Run the scripted conversation; return what the model saw as tool results."""
    transcript: list[str] = []
    async with mcpmount.open_registry(config) as registry:
        view = registry.view()
        model = ScriptedModel()
        while True:
            tools = view.tools()
            reply = model.respond(tools, transcript)
            if isinstance(reply, str):
                print(f"model: {reply}")
                return transcript
            arguments = json.dumps(reply.arguments)
            print(f"model calls {reply.name}({arguments})  [{len(tools)} tools shown]")
            try:
                result = await view.call(reply.name, reply.arguments)
            except mcpmount.RegistryError as exc:  # the registry's own failure: tell the model
                text = f"error: {exc}"
            else:
                text = ("error: " if result.is_error else "") + text_of(result)
            print(f"  -> {' '.join(text.split())[:120]}")
            transcript.append(text)


if __name__ == "__main__":
    anyio.run(run_agent, sys.argv[1] if len(sys.argv) > 1 else "configs/demo.toml")
