"""An Anthropic Messages agent loop over the registry, with a scripted model.

Run it from the repository root:  python examples/anthropic_loop.py [configs/demo.toml]

``adapter.tools()`` holds every tool: deferred ones carry ``"defer_loading": true``, and
our ``tool_search`` answers with ``tool_reference`` blocks, which the API expands into
the deferred definitions. A real agent replaces `ScriptedModel.create` with
``client.messages.create(model=..., max_tokens=..., messages=messages, tools=tools)``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import anyio

import mcpmount
from mcpmount.adapters import AnthropicAdapter, JSONObject


def tool_use(block_id: str, name: str, arguments: JSONObject) -> JSONObject:
    return {"type": "tool_use", "id": block_id, "name": name, "input": arguments}


@dataclass
class ScriptedModel:
    """Plays back a plan: search, call the tool the search referenced, then answer."""

    plan: list[JSONObject] = field(
        default_factory=lambda: [
            tool_use("toolu_1", "tool_search", {"query": "convert a time between time zones"}),
            tool_use(
                "toolu_2",
                "clock__convert_time",
                {
                    "time": "2026-11-29T09:00",
                    "from_timezone": "Europe/Paris",
                    "to_timezone": "Asia/Tokyo",
                },
            ),
            tool_use("toolu_3", "notes__add_note", {"title": 42}),
        ]
    )

    def create(self, messages: list[JSONObject], tools: list[JSONObject]) -> JSONObject:
        if not self.plan:
            return {"role": "assistant", "content": [{"type": "text", "text": "17:00 in Tokyo."}]}
        block = self.plan.pop(0)
        deferred = sum(1 for tool in tools if tool.get("defer_loading"))
        print(f"model calls {block['name']}  [{len(tools)} tools, {deferred} deferred]")
        return {"role": "assistant", "content": [block]}


async def run_agent(config: str) -> list[JSONObject]:
    """Run the scripted conversation; return the messages."""
    messages: list[JSONObject] = [{"role": "user", "content": "9:00 Paris in Tokyo?"}]
    async with mcpmount.open_registry(config) as registry:
        adapter = AnthropicAdapter(registry)
        tools = adapter.tools()  # the same list every turn: cacheable
        model = ScriptedModel()
        while True:
            reply = model.create(messages, tools)
            messages.append(reply)
            content = reply["content"]
            assert isinstance(content, list)
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if not uses:
                print(f"model: {content[0]['text']}")  # pyright: ignore[reportUnknownArgumentType, reportIndexIssue]
                return messages
            results = [await adapter.run(block) for block in uses]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            for result in results:
                error = "  (is_error)" if result.get("is_error") else ""
                print(f"  -> {str(result['content'])[:100]}{error}")
            messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    anyio.run(run_agent, sys.argv[1] if len(sys.argv) > 1 else "configs/demo.toml")
