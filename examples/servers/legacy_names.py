"""A low-level server whose tool names are dotted, like many older servers.

"files.read" or "db.query.run" are valid MCP (SEP-986) names, but model APIs reject dots in
function names, so a registry has to map them (e.g. to "legacy__files_read") and back.
The tools work on a small in-memory file system and table.
Run: `python examples/servers/legacy_names.py`.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

FILES: dict[str, str] = {"readme.txt": "Hello from the legacy server.\n", "todo.txt": "- ship it\n"}
FORECAST = {"paris": "light rain, 14 C", "tokyo": "sunny, 22 C", "lima": "overcast, 18 C"}
ROWS = [{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}, {"id": 3, "name": "linus"}]


def obj(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


STR = {"type": "string"}
TOOLS = [
    types.Tool(name="files.list", description="List file names.", input_schema=obj({})),
    types.Tool(
        name="files.read",
        description="Read a file's text.",
        input_schema=obj({"path": STR}, "path"),
    ),
    types.Tool(
        name="files.write",
        description="Create or replace a file.",
        input_schema=obj({"path": STR, "text": STR}, "path", "text"),
    ),
    types.Tool(
        name="weather.get-forecast",
        description="Today's forecast for a city (paris, tokyo, lima).",
        input_schema=obj({"city": STR}, "city"),
    ),
    types.Tool(
        name="db.query.run",
        description="Rows of the people table whose name contains the filter.",
        input_schema=obj({"name_contains": STR}),
    ),
]


def run_tool(name: str, args: dict[str, Any]) -> str:
    match name:
        case "files.list":
            return "\n".join(sorted(FILES))
        case "files.read":
            if (text := FILES.get(str(args["path"]))) is None:
                raise KeyError(f"no such file: {args['path']}")
            return text
        case "files.write":
            FILES[str(args["path"])] = str(args["text"])
            return f"wrote {len(str(args['text']))} characters to {args['path']}"
        case "weather.get-forecast":
            city = str(args["city"]).lower()
            return FORECAST.get(city, f"no forecast for {city}")
        case "db.query.run":
            needle = str(args.get("name_contains", "")).lower()
            return json.dumps([r for r in ROWS if needle in str(r["name"])])
        case _:
            raise MCPError(code=types.METHOD_NOT_FOUND, message=f"unknown tool {name!r}")


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    try:
        text, is_error = run_tool(params.name, params.arguments or {}), False
    except KeyError as exc:  # a missing argument or file: a tool-level error the model can read
        text, is_error = f"error: {exc.args[0]}", True
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


server = Server("legacy", version="0.9.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
