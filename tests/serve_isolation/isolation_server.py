"""An MCP server with something of every kind, to mount once in the open and once hidden.

The same program is mounted as ``pub`` (a limited token's namespace) and as ``vault``
(hidden from that token). ``--private TEXT`` makes it the hidden one: every text it writes
(descriptions, results, prompt and resource texts, log messages, questions) carries TEXT,
and it has more: the tool ``vault_admin_secret``, the deferred tool ``quokka_census``
(the only tool with the word "quokka") and the prompt ``vault_admin_secret_prompt``.

Tools: ``echo(text)``; ``log(text)`` logs ``text`` at debug, info and warning, those at or
above the level ``logging/setLevel`` set (info until one is set), or, in the 2026-07-28 era,
those the request opted in to; ``elicit(question)`` asks a form with one ``answer`` field
(in either era) and says the answer; ``headed(region, text)`` declares ``region`` an
``x-mcp-header`` parameter (``Mcp-Param-Region``); ``grow(name)`` adds a tool ``name`` and
announces it; ``touch(uri)`` announces that a resource changed (both eras each);
``archive_lookup(id)`` and ``ledger_export()`` (meant to be deferred).
Prompts: ``greet(name)``. Resources: ``memo://one``; template ``memo://items/{item}``;
completions for ``greet``'s ``name`` and the template's ``item``; subscriptions.
``--record PATH`` appends a line for each ``logging/setLevel LEVEL`` received, and
``tools/call NAME LEVEL`` for each call (LEVEL: the call's 2026-07-28 log opt-in, or -).
Run: ``python tests/serve_isolation/isolation_server.py --label NAME [flags]`` (stdio).
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--label", required=True)
parser.add_argument("--private", default="")
parser.add_argument("--record", default=None)
options = parser.parse_args()

LABEL: str = options.label
PRIVATE: str = options.private
LEVELS: list[types.LoggingLevel] = ["debug", "info", "warning"]
TEMPLATE = "memo://items/{item}"
level: list[types.LoggingLevel] = ["info"]
bus = InMemorySubscriptionBus()


def said(text: str) -> str:
    """``text`` as this server says it: with the private text, if it has one."""
    return f"{text} {PRIVATE}" if PRIVATE else text


def tool(raw: str, summary: str, **properties: dict[str, Any]) -> types.Tool:
    schema = {"type": "object", "properties": properties}
    return types.Tool(name=raw, description=said(summary), input_schema=schema)


STRING: dict[str, Any] = {"type": "string"}
tools = [
    tool("echo", "Return the text unchanged.", text=STRING),
    tool("log", "Log the text at debug, info and warning.", text=STRING),
    tool("elicit", "Ask the user a question and return the answer.", question=STRING),
    tool("headed", "Echo text for a region.", region={**STRING, "x-mcp-header": "Region"}),
    tool("grow", "Add a tool with this name.", name=STRING),
    tool("touch", "Announce that a resource changed.", uri=STRING),
    tool("archive_lookup", "Look up an archived record by id.", id=STRING),
    tool("ledger_export", "Export the ledger as lines."),
]
prompts = [
    types.Prompt(
        name="greet",
        description=said("Greet someone by name."),
        arguments=[types.PromptArgument(name="name", required=True)],
    )
]
if PRIVATE:
    tools += [
        tool("vault_admin_secret", "Reveal the admin secret."),
        tool("quokka_census", "Count the quokka population of the island."),
    ]
    prompts.append(
        types.Prompt(name="vault_admin_secret_prompt", description=said("The admin secret."))
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    params = ctx.params or {}
    line = None
    if ctx.method == "logging/setLevel":
        line = f"logging/setLevel {params.get('level')}"
    elif ctx.method == "tools/call":
        opted = (ctx.meta or {}).get(types.LOG_LEVEL_META_KEY, "-")
        line = f"tools/call {params.get('name')} {opted}"
    if line is not None and options.record:
        async with await anyio.open_file(options.record, "a") as f:
            await f.write(line + "\n")
    return await call_next(ctx)


async def set_level(
    ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    level.append(params.level)
    return types.EmptyResult()


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=tools)


async def ask(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, question: str
) -> str | types.InputRequiredResult:
    """The user's answer to ``question``, or the action taken; in either era."""
    schema: types.ElicitRequestedSchema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    message = said(question)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        reply = (params.input_responses or {}).get("answer")
        if reply is None:
            form = types.ElicitRequestFormParams(message=message, requested_schema=schema)
            asked: dict[str, types.InputRequest] = {"answer": types.ElicitRequest(params=form)}
            return types.InputRequiredResult(input_requests=asked)
    else:
        reply = await ctx.session.elicit_form(message, schema, ctx.request_id)
    if isinstance(reply, types.ElicitResult) and reply.action == "accept" and reply.content:
        return str(reply.content.get("answer"))
    return f"({reply.action if isinstance(reply, types.ElicitResult) else '?'})"


async def announce_tools(ctx: ServerRequestContext[Any, Any]) -> None:
    with contextlib.suppress(Exception):
        await ctx.session.send_tool_list_changed()
    await bus.publish(ToolsListChanged())


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    args = params.arguments or {}
    match params.name:
        case "echo" | "headed" | "archive_lookup" | "ledger_export" | "vault_admin_secret":
            value = said(f"{LABEL} {params.name}: {args.get('text', args.get('region', ''))}")
        case "log":
            with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
                warnings.simplefilter("ignore")
                for each in LEVELS[LEVELS.index(level[-1]) if level[-1] in LEVELS else 0 :]:
                    data = said(f"{LABEL} log {each}: {args.get('text')}")
                    await ctx.session.send_log_message(each, data, LABEL, ctx.request_id)  # pyright: ignore[reportDeprecated]
            value = "logged"
        case "elicit":
            answer = await ask(ctx, params, str(args.get("question")))
            if isinstance(answer, types.InputRequiredResult):
                return answer
            value = said(f"{LABEL} was told: {answer}")
        case "grow":
            tools.append(tool(str(args["name"]), "A tool added at run time."))
            await announce_tools(ctx)
            value = "grown"
        case "touch":
            uri = str(args["uri"])
            with contextlib.suppress(Exception):
                await ctx.session.send_resource_updated(uri)
            await bus.publish(ResourceUpdated(uri=uri))
            value = "touched"
        case "quokka_census":
            value = said("quokkas: 12")
        case _:
            if params.name not in {t.name for t in tools}:
                raise MCPError(code=types.INVALID_PARAMS, message=f"no tool {params.name}")
            value = said(f"{LABEL} grown tool")
    return types.CallToolResult(content=[text(value)])


async def list_prompts(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=prompts)


async def get_prompt(
    ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    if params.name not in {p.name for p in prompts}:
        raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name}")
    who = (params.arguments or {}).get("name", "you")
    message = types.PromptMessage(role="user", content=text(said(f"{LABEL} greets {who}")))
    return types.GetPromptResult(messages=[message])


async def list_resources(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    memo = types.Resource(uri="memo://one", name="one", description=said("A memo."))
    return types.ListResourcesResult(resources=[memo])


async def list_templates(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    item = said("An item.")
    template = types.ResourceTemplate(uri_template=TEMPLATE, name="item", description=item)
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(
    ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if params.uri != "memo://one" and not params.uri.startswith("memo://items/"):
        raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {params.uri}")
    content = types.TextResourceContents(uri=params.uri, text=said(f"{LABEL} memo {params.uri}"))
    return types.ReadResourceResult(contents=[content])


async def complete(
    ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
) -> types.CompleteResult:
    choices = [said(f"{LABEL}-alice"), said(f"{LABEL}-bob")]
    found = [c for c in choices if c.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=found))


async def subscribed(ctx: ServerRequestContext[Any, Any], params: Any) -> types.EmptyResult:
    return types.EmptyResult()


server: Server[Any] = Server(
    f"isolation-{LABEL}",
    version="1.0.0",
    instructions=said(f"The {LABEL} server."),
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_completion=complete,
    on_subscribe_resource=subscribed,
    on_unsubscribe_resource=subscribed,
    on_subscriptions_listen=ListenHandler(bus),
)
server.middleware.append(record)
server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


async def main() -> None:
    notify = NotificationOptions(tools_changed=True, resources_changed=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(notify))


if __name__ == "__main__":
    anyio.run(main)
