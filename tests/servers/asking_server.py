"""An MCP server whose tools ask their client for things, in both protocol eras.

Tools that ask (through ``Resolve`` markers, which the SDK sends as standalone requests in
the handshake era and as ``InputRequiredResult`` round trips in the 2026-07-28 era):
``sample(prompt)`` asks for a completion; ``elicit(question)`` asks a form with one
``answer`` field; ``elicit_url(url)`` asks the user to visit ``url`` (URL mode, id
``visit-1``; in the handshake era, once the client accepts, it then sends
``notifications/elicitation/complete`` for it); ``roots()`` lists the client's roots;
``both(prompt)`` samples and lists roots; ``sample_tools(prompt)`` samples offering the
model a ``lookup`` tool (which the SDK sends only to a client that declared
``sampling.tools``) and says which tool the model chose, or its text.
A prompt and a resource that ask too (form elicitation, an ``InputRequiredResult`` in the
2026-07-28 era): the prompt ``interview(topic)`` and the template ``asked://{topic}`` ask
"why {topic}?" and put the answer (or the action) in their text.
Other tools: ``log(text)`` logs ``text`` at every MCP level (in the handshake era, those
at or above the level ``logging/setLevel`` set, like a careful server; in the 2026-07-28
era the SDK drops what the request did not opt in to); ``slow(seconds)`` sleeps;
``delete_thing(name)``, ``write_file(path)``, ``read_thing(name)`` (annotated destructive,
destructive, read-only) only count; ``calls()`` returns how many times each tool ran, how many
``notifications/roots/list_changed`` arrived (``roots_changed``) and the last level set
(``level``).
Run: ``python tests/servers/asking_server.py`` (stdio).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import Annotated

import anyio
import mcp_types
from mcp.server import ServerRequestContext
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from pydantic import BaseModel

server = MCPServer("asking", version="1.0.0")
ran: Counter[str] = Counter()
levels_set: list[mcp_types.LoggingLevel] = []

LEVELS: list[mcp_types.LoggingLevel] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
]


class Answer(BaseModel):
    answer: str


def ask_model(prompt: str) -> Sample:
    message = mcp_types.TextContent(type="text", text=prompt)
    return Sample([mcp_types.SamplingMessage(role="user", content=message)], max_tokens=100)


def ask_user(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


def ask_roots() -> ListRoots:
    return ListRoots()


def _text(result: mcp_types.CreateMessageResult) -> str:
    content = result.content
    return content.text if isinstance(content, mcp_types.TextContent) else repr(content)


@server.tool()
async def sample(
    prompt: str, completion: Annotated[mcp_types.CreateMessageResult, Resolve(ask_model)]
) -> str:
    """Ask the client's model to complete ``prompt``."""
    ran["sample"] += 1
    return f"model said: {_text(completion)}"


LOOKUP = mcp_types.Tool(
    name="lookup", description="Look a word up.", input_schema={"type": "object"}
)


def ask_model_with_tools(prompt: str) -> Sample:
    message = mcp_types.TextContent(type="text", text=prompt)
    messages = [mcp_types.SamplingMessage(role="user", content=message)]
    return Sample(messages, max_tokens=100, tools=[LOOKUP])


@server.tool()
async def sample_tools(
    prompt: str,
    completion: Annotated[mcp_types.CreateMessageResultWithTools, Resolve(ask_model_with_tools)],
) -> str:
    """Ask the client's model to complete ``prompt``, offering it the ``lookup`` tool."""
    ran["sample_tools"] += 1
    blocks = completion.content if isinstance(completion.content, list) else [completion.content]
    for block in blocks:
        if isinstance(block, mcp_types.ToolUseContent):
            return f"model chose: {block.name}"
    return f"model said: {' '.join(b.text for b in blocks if isinstance(b, mcp_types.TextContent))}"


@server.tool()
async def elicit(
    question: str, reply: Annotated[ElicitationResult[Answer], Resolve(ask_user)]
) -> str:
    """Ask the user ``question`` (form mode)."""
    ran["elicit"] += 1
    if reply.action == "accept":
        return f"user answered: {reply.data.answer}"  # pyright: ignore[reportAttributeAccessIssue]
    return f"user action: {reply.action}"


@server.tool()
async def roots(listed: Annotated[mcp_types.ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the client's roots."""
    ran["roots"] += 1
    return "roots: " + " ".join(str(root.uri) for root in listed.roots)


@server.tool()
async def both(
    prompt: str,
    completion: Annotated[mcp_types.CreateMessageResult, Resolve(ask_model)],
    listed: Annotated[mcp_types.ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Sample and list roots in one call."""
    ran["both"] += 1
    return f"model said: {_text(completion)}; roots: {len(listed.roots)}"


@server.tool()
async def elicit_url(url: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user to visit ``url`` (URL mode)."""
    message = "Please sign in"
    if ctx.protocol_version == "2026-07-28":
        responses = ctx.input_responses or {}
        reply = responses.get("visit")
        if reply is None:
            params = mcp_types.ElicitRequestURLParams(
                message=message, url=url, elicitation_id="visit-1"
            )
            request = mcp_types.ElicitRequest(params=params)
            return mcp_types.InputRequiredResult(input_requests={"visit": request})
        action = reply.action if isinstance(reply, mcp_types.ElicitResult) else "?"
    else:
        action = (await ctx.elicit_url(message, url, "visit-1")).action
        if action == "accept":  # the user came back: say so, as a real server would
            await ctx.session.send_elicit_complete("visit-1")
    ran["elicit_url"] += 1
    return f"user action: {action}"


async def _ask_why(topic: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user "why {topic}?" in either era: the answer, or the action taken."""
    question = f"why {topic}?"
    if ctx.protocol_version == "2026-07-28":
        reply = (ctx.input_responses or {}).get("why")
        if reply is None:
            schema = Answer.model_json_schema()
            params = mcp_types.ElicitRequestFormParams(message=question, requested_schema=schema)
            request = mcp_types.ElicitRequest(params=params)
            return mcp_types.InputRequiredResult(input_requests={"why": request})
        if not isinstance(reply, mcp_types.ElicitResult):
            return "user action: ?"
        if reply.action == "accept" and reply.content is not None:
            return f"user answered: {reply.content.get('answer')}"
        return f"user action: {reply.action}"
    result = await ctx.elicit(question, Answer)
    if result.action == "accept":
        return f"user answered: {result.data.answer}"  # pyright: ignore[reportAttributeAccessIssue]
    return f"user action: {result.action}"


@server.prompt()
async def interview(topic: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user why ``topic``, and make the answer the prompt."""
    answer = await _ask_why(topic, ctx)
    if isinstance(answer, str):
        ran["interview"] += 1
    return answer


@server.resource("asked://{topic}")
async def asked(topic: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user why ``topic``, and make the answer the resource."""
    answer = await _ask_why(topic, ctx)
    if isinstance(answer, str):
        ran["asked"] += 1
    return answer


@server.tool()
async def log(text: str, ctx: Context) -> str:
    """Log ``text`` at every level, the data of the last as a JSON object."""
    ran["log"] += 1
    with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
        warnings.simplefilter("ignore")
        least = LEVELS.index(levels_set[-1]) if levels_set else 0
        for level in LEVELS[least:-1]:
            await ctx.log(level, f"{level}: {text}", logger_name="asking")  # pyright: ignore[reportDeprecated]
        await ctx.log("emergency", {"text": text, "level": "emergency"})  # pyright: ignore[reportDeprecated]
    return "logged"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep ``seconds``."""
    ran["slow"] += 1
    await anyio.sleep(seconds)
    return "slept"


@server.tool(annotations=mcp_types.ToolAnnotations(destructive_hint=True))
def delete_thing(name: str) -> str:
    """Delete a thing (only counts)."""
    ran["delete_thing"] += 1
    return f"deleted {name}"


@server.tool()
def write_file(path: str) -> str:
    """Write a file (only counts)."""
    ran["write_file"] += 1
    return f"wrote {path}"


@server.tool(annotations=mcp_types.ToolAnnotations(read_only_hint=True))
def read_thing(name: str) -> str:
    """Read a thing (only counts)."""
    ran["read_thing"] += 1
    return f"read {name}"


@server.tool()
def calls() -> str:
    """How many times each tool ran, and more (see the module docstring), as JSON."""
    return json.dumps({**ran, "level": levels_set[-1] if levels_set else None})


async def set_level(
    ctx: ServerRequestContext, params: mcp_types.SetLevelRequestParams
) -> mcp_types.EmptyResult:
    levels_set.append(params.level)
    return mcp_types.EmptyResult()


async def roots_list_changed(
    ctx: ServerRequestContext, params: mcp_types.NotificationParams
) -> None:
    ran["roots_changed"] += 1


lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
lowlevel.add_request_handler("logging/setLevel", mcp_types.SetLevelRequestParams, set_level)
lowlevel.add_notification_handler(
    "notifications/roots/list_changed", mcp_types.NotificationParams, roots_list_changed
)


if __name__ == "__main__":
    server.run()
