"""An MCP server whose every string tries to take over the terminal that prints it.

Each text carries ``HOSTILE``: a screen clear (``ESC[2J``), an OSC window-title sequence
ended by BEL, a C1 CSI (U+009B), a bidi override (U+202E) and isolate (U+2066), a
zero-width space, a tag character (U+E0041), DEL, and rich markup (``[bold red]``,
``[link=...]``). It is in every tool's description, ``paint``'s title, the raw name of a
tool that breaks SEP-986 (mount with ``invalid_names = "sanitize"``), a resource's URI
(less the C0 controls and DEL the registry refuses there), name, type and description, a
template, a prompt's description and argument name, and every answer: ``paint`` (text
and an image's type), ``fail`` (an error result), ``explode`` (a JSON-RPC error),
``crash`` (its stderr, then it exits), ``prompts/get`` and ``resources/read``.
Flag: ``--crash`` writes ``HOSTILE`` to stderr and exits 1 before serving.
Run: ``python tests/servers/hostile_text_server.py [--crash]`` (stdio).
"""

from __future__ import annotations

import os
import sys

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

HOSTILE = (
    "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202etxt.exe\u2066\u200b\U000e0041\x7f"
    " [bold red]loud[/] [link=https://evil.example]click[/link]"
)
"""The same string the tests look for (they import nothing from here: it is a script)."""

OBJECT = {"type": "object"}
TOOLS = [
    types.Tool(name="paint", title=HOSTILE, description=HOSTILE, input_schema=OBJECT),
    *(
        types.Tool(name=n, description=HOSTILE, input_schema=OBJECT)
        for n in ("fail", "explode", "crash")
    ),
    types.Tool(name=f"raw{HOSTILE}", description="a hostile raw name", input_schema=OBJECT),
]
URI = "memo://x/" + "".join(c for c in HOSTILE if c >= " " and c != "\x7f")
"""A URI may not hold C0 controls or DEL (the registry refuses the server), but the rest."""


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext, params: types.CallToolRequestParams
) -> types.CallToolResult:
    match params.name:
        case "paint":
            image = types.ImageContent(type="image", data="AAAA", mime_type=HOSTILE)
            return types.CallToolResult(content=[text(f"line one\n{HOSTILE}\tend"), image])
        case "fail":
            return types.CallToolResult(content=[text(HOSTILE)], is_error=True)
        case "crash":
            sys.stderr.write(f"dying: {HOSTILE}\n")
            sys.stderr.flush()
            os._exit(1)
        case _:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"exploded: {HOSTILE}")


async def list_prompts(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    argument = types.PromptArgument(name=f"arg{HOSTILE}", description=HOSTILE)
    prompt = types.Prompt(name="greet", description=HOSTILE, arguments=[argument])
    return types.ListPromptsResult(prompts=[prompt])


async def get_prompt(
    ctx: ServerRequestContext, params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    message = types.PromptMessage(role="user", content=text(HOSTILE))
    return types.GetPromptResult(messages=[message])


async def list_resources(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    resource = types.Resource(uri=URI, name=HOSTILE, mime_type=HOSTILE, description=HOSTILE)
    return types.ListResourcesResult(resources=[resource])


async def list_templates(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template=URI + "/{item}", name=HOSTILE)
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(
    ctx: ServerRequestContext, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=URI, text=HOSTILE)])


server = Server(
    "hostile",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if "--crash" in sys.argv:
        sys.stderr.write(f"cannot start: {HOSTILE}\n")
        sys.exit(1)
    anyio.run(main)
