"""An OpenAI-style agent loop over the registry, with a scripted model instead of the API.

Run it from the repository root:  python examples/openai_loop.py [configs/demo.toml]

Each turn sends ``adapter.tools()`` (Chat Completions function tools: the manifest plus
whatever this conversation's searches found) and gets back an assistant message. A real
agent replaces `ScriptedModel.create` with
``client.chat.completions.create(model=..., messages=messages, tools=tools)``; the
messages are the same plain dicts.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import anyio

import mcpmount
from mcpmount.adapters import JSONObject, OpenAIAdapter


def tool_call(call_id: str, name: str, arguments: dict[str, object]) -> JSONObject:
    function: JSONObject = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


@dataclass
class ScriptedModel:
    """Plays back a plan: search for a deferred tool, call it, then answer."""

    plan: list[JSONObject] = field(
        default_factory=lambda: [
            tool_call("call_1", "tool_search", {"query": "convert a time between time zones"}),
            tool_call(
                "call_2",
                "clock__convert_time",
                {
                    "time": "2026-11-29T09:00",
                    "from_timezone": "Europe/Paris",
                    "to_timezone": "Asia/Tokyo",
                },
            ),
            tool_call("call_3", "clock__no_such_tool", {}),
        ]
    )

    def create(self, messages: list[JSONObject], tools: list[JSONObject]) -> JSONObject:
        if not self.plan:
            return {"role": "assistant", "content": "09:00 in Paris is 17:00 in Tokyo."}
        call = self.plan.pop(0)
        function = call["function"]
        assert isinstance(function, dict)
        # A real model calls what it was shown (or, as call_3 does, a name it guessed).
        print(f"model calls {function['name']}  [{len(tools)} tools shown]")
        return {"role": "assistant", "content": None, "tool_calls": [call]}


async def run_agent(config: str) -> list[JSONObject]:
    """Run the scripted conversation; return the messages."""
    messages: list[JSONObject] = [{"role": "user", "content": "What time is 9:00 Paris in Tokyo?"}]
    async with mcpmount.open_registry(config) as registry:
        adapter = OpenAIAdapter(registry)
        model = ScriptedModel()
        while True:
            reply = model.create(messages, adapter.tools())
            messages.append(reply)
            calls = reply.get("tool_calls")
            if not isinstance(calls, list):
                print(f"model: {reply['content']}")
                return messages
            for call in calls:  # pyright: ignore[reportUnknownVariableType]
                result = await adapter.run(call)  # pyright: ignore[reportUnknownArgumentType]
                print(f"  -> {' '.join(str(result['content']).split())[:110]}")
                messages.append(result)


if __name__ == "__main__":
    anyio.run(run_agent, sys.argv[1] if len(sys.argv) > 1 else "configs/demo.toml")
