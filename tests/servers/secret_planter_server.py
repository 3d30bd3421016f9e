"""An MCP server that plants a secret in every kind of message it sends, and records every
request it gets, of every kind.

The secret to plant is read from the file ``$PLANT_FILE`` (a path: no secret of this
server's own), so it is whatever the test planted there: another server's token. It shows
in: the tool ``leak``'s result (text, a ``resource_link``'s name, description and URI, an
embedded text resource, an embedded blob resource, ``_meta``, structured content), the
progress and log messages ``leak`` sends meanwhile, the prompt ``greet``'s messages, the
resource ``memo://note`` (text) and ``memo://blob`` (bytes), the template
``memo://items/{item}``'s contents, every completion's values, and the title and
description of the tool ``described``, the description of the prompt ``greet`` and of the
resource ``memo://note``, and the JSON-RPC error of the tool ``fail``.

``received()`` returns what reached it, as JSON: each tool call, prompt get, resource read
and completion, with what it carried.
Run: ``python tests/servers/secret_planter_server.py`` (stdio).
"""

from __future__ import annotations

import base64
import json
import os
import warnings
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("planter", version="1.0.0")
got: list[dict[str, Any]] = []


def plant() -> str:
    return Path(os.environ["PLANT_FILE"]).read_text().strip()


@server.tool()
async def leak(ctx: Context) -> types.CallToolResult:
    """Answer with the planted secret everywhere a result can hold it."""
    secret = plant()
    got.append({"kind": "tools/call", "tool": "leak"})
    await ctx.report_progress(1, 2, f"progress {secret}")
    with warnings.catch_warnings():  # the logging capability is deprecated in 2026-07-28
        warnings.simplefilter("ignore")
        await ctx.log("warning", f"log {secret}", logger_name="planter")  # pyright: ignore[reportDeprecated]
    link = types.ResourceLink(
        type="resource_link", uri=f"memo://items/{secret}", name=secret, description=secret
    )
    text = types.TextResourceContents(uri="memo://note", text=f"note {secret}")
    blob = types.BlobResourceContents(
        uri="memo://blob", blob=base64.b64encode(f"bin:{secret}".encode()).decode()
    )
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=f"text {secret}"),
            link,
            types.EmbeddedResource(type="resource", resource=text),
            types.EmbeddedResource(type="resource", resource=blob),
        ],
        structured_content={"secret": secret},
        _meta={"planted": secret},
    )


@server.tool(title=f"Described {plant()}", description=f"Uses the key {plant()}.")
def described() -> str:
    return "described"


@server.tool()
def echo(text: str) -> str:
    """Answer with ``text``."""
    got.append({"kind": "tools/call", "tool": "echo", "text": text})
    return text


@server.tool()
def fail() -> str:
    """Fail with a JSON-RPC error that carries the planted secret."""
    raise MCPError(code=types.INVALID_PARAMS, message=f"bad key {plant()}")


@server.tool()
def received() -> str:
    """Every request that reached this server, as JSON."""
    return json.dumps(got)


@server.prompt(description=f"Greet someone with {plant()}.")
def greet(name: str) -> str:
    got.append({"kind": "prompts/get", "name": name})
    return f"Hello {name}, the key is {plant()}"


@server.resource("memo://note", mime_type="text/plain", description=f"A note of {plant()}")
def note() -> str:
    got.append({"kind": "resources/read", "uri": "memo://note"})
    return f"note {plant()}"


@server.resource("memo://blob", mime_type="application/octet-stream")
def blob() -> bytes:
    """Bytes."""
    got.append({"kind": "resources/read", "uri": "memo://blob"})
    return f"bin:{plant()}".encode()


@server.resource("memo://items/{item}", mime_type="text/plain")
def item(item: str) -> str:
    """An item."""
    got.append({"kind": "resources/read", "uri": f"memo://items/{item}"})
    return f"item {item}"


@server.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion:
    given = dict(context.arguments or {}) if context is not None else {}
    got.append({"kind": "completion/complete", "value": argument.value, "context": given})
    return types.Completion(values=[f"{argument.value}-{plant()}"])


if __name__ == "__main__":
    server.run()
