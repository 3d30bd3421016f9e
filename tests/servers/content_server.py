"""An MCP server with prompts, resources, a template, completions and resource subscriptions.

Prompts: ``greet(name, style?)`` (its messages hold an embedded ``memo://one``).
Resources: ``memo://one`` and ``file:///shared.txt`` (its text names ``--label``, so two
servers with the same URI can be told apart); template ``memo://items/{item}``; reading
the unlisted ``memo://slow`` takes a minute; reading the unlisted ``memo://gone`` is
answered ``-32002``, as a server written before the 2026-07-28 revision says "not found".
Completions: ``greet``'s ``name`` and the template's ``item``.
Tools: ``link()`` returns a ``resource_link`` and an embedded resource; ``touch(uri)``
announces that a resource changed; ``add_resource(uri)`` and ``add_prompt(name)`` change
the lists and announce it, in both protocol eras (the handshake era's notices and the
2026-07-28 listen stream).
Flags: ``--label TEXT``, ``--bad-prompt`` (also lists a prompt named "bad name!"),
``--greet-description TEXT``, ``--no-subscribe`` (no ``resources/subscribe`` handler).
Run: ``python tests/servers/content_server.py [flags]`` (stdio).
"""

from __future__ import annotations

import argparse
import contextlib

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.caching import CacheableMethod
from mcp.server.lowlevel import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
)

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--label", default="content")
parser.add_argument("--bad-prompt", action="store_true")
parser.add_argument("--greet-description", default="Greet someone by name.")
parser.add_argument("--no-subscribe", action="store_true")
options = parser.parse_args()

TEMPLATE = "memo://items/{item}"
EMBEDDED = types.EmbeddedResource(
    type="resource", resource=types.TextResourceContents(uri="memo://one", text="one")
)

prompts = [
    types.Prompt(
        name="greet",
        description=options.greet_description,
        arguments=[
            types.PromptArgument(name="name", required=True),
            types.PromptArgument(name="style"),
        ],
    )
]
if options.bad_prompt:
    prompts.append(types.Prompt(name="bad name!"))
resources = [
    types.Resource(uri="memo://one", name="one", mime_type="text/plain"),
    types.Resource(uri="file:///shared.txt", name="shared"),
]
texts = {"memo://one": "one", "file:///shared.txt": f"shared by {options.label}"}
subscribed: set[str] = set()
bus = InMemorySubscriptionBus()


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def list_prompts(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=prompts)


async def get_prompt(
    ctx: ServerRequestContext, params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    if params.name not in {p.name for p in prompts}:
        raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name}")
    args = params.arguments or {}
    if "name" not in args:
        raise MCPError(code=types.INVALID_PARAMS, message="name is required")
    greeting = f"Hello, {args['name']}{'!' if args.get('style') == 'loud' else '.'}"
    return types.GetPromptResult(
        messages=[
            types.PromptMessage(role="user", content=text(greeting)),
            types.PromptMessage(role="user", content=EMBEDDED),
        ]
    )


async def list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=resources)


async def list_templates(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template=TEMPLATE, name="item")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(
    ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = params.uri
    if uri == "memo://slow":  # unlisted: a read that takes longer than any test waits
        await anyio.sleep(60)
    if uri == "memo://gone":
        raise MCPError(code=-32002, message=f"resource {uri} not found", data={"uri": uri})
    if uri.startswith("memo://items/"):
        value = f"item:{uri.removeprefix('memo://items/')}"
    elif uri in texts:
        value = texts[uri]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {uri}")
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=value)])


async def complete(
    ctx: ServerRequestContext, params: types.CompleteRequestParams
) -> types.CompleteResult:
    ref = params.ref
    if isinstance(ref, types.PromptReference) and ref.name == "greet":
        choices = ["alice", "bob", "carol"]
    elif isinstance(ref, types.ResourceTemplateReference) and ref.uri == TEMPLATE:
        choices = ["apple", "avocado", "banana"]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"cannot complete {ref}")
    found = [c for c in choices if c.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=found))


async def subscribe(
    ctx: ServerRequestContext, params: types.SubscribeRequestParams
) -> types.EmptyResult:
    subscribed.add(params.uri)
    return types.EmptyResult()


async def unsubscribe(
    ctx: ServerRequestContext, params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    subscribed.discard(params.uri)
    return types.EmptyResult()


TOOLS = [
    types.Tool(name="link", input_schema={"type": "object"}),
    *(
        types.Tool(
            name=name,
            input_schema={"type": "object", "properties": {arg: {"type": "string"}}},
        )
        for name, arg in (("touch", "uri"), ("add_resource", "uri"), ("add_prompt", "name"))
    ),
]


async def list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext, params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    session = ctx.session
    match params.name:
        case "link":
            link = types.ResourceLink(type="resource_link", uri="memo://one", name="one")
            return types.CallToolResult(content=[text("see"), link, EMBEDDED])
        case "touch":
            uri = str(args["uri"])
            if uri in subscribed:  # the handshake era: the server keeps the subscriptions
                with contextlib.suppress(Exception):
                    await session.send_resource_updated(uri)
            await bus.publish(ResourceUpdated(uri=uri))
        case "add_resource":
            uri = str(args["uri"])
            resources.append(types.Resource(uri=uri, name=uri))
            texts[uri] = f"added {uri}"
            with contextlib.suppress(Exception):
                await session.send_resource_list_changed()
            await bus.publish(ResourcesListChanged())
        case "add_prompt":
            prompts.append(types.Prompt(name=str(args["name"])))
            with contextlib.suppress(Exception):
                await session.send_prompt_list_changed()
            await bus.publish(PromptsListChanged())
        case _:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no tool {params.name}")
    return types.CallToolResult(content=[text("done")])


CACHED_LISTS: tuple[CacheableMethod, ...] = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
)
"""Their hint (2026-07-28 era): anyone may keep them a day, so a lazy start has a cache."""


server = Server(
    "content",
    version="1.0.0",
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_completion=complete,
    on_subscribe_resource=None if options.no_subscribe else subscribe,
    on_unsubscribe_resource=None if options.no_subscribe else unsubscribe,
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscriptions_listen=None if options.no_subscribe else ListenHandler(bus),
    cache_hints=dict.fromkeys(CACHED_LISTS, CacheHint(86400000, "public")),
)


async def main() -> None:
    notify = NotificationOptions(prompts_changed=True, resources_changed=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(notify))


if __name__ == "__main__":
    anyio.run(main)
