"""An MCP Apps server: tools that name ``ui://`` views, with each visibility.

Views: ``ui://shared/app.html`` (``text/html;profile=mcp-app``; every instance lists the same
URI, and its text names ``--label``, so two servers can be told apart) and
``ui://widget/card.html`` (the OpenAI Apps SDK's ``text/html+skybridge``); the template
``ui://pages/{page}`` is not in ``resources/list``, as the spec allows for views.
Tools: ``show`` (the view, for model and app; its result's ``_meta`` names the view too),
``refresh`` (app only: ``visibility = ["app"]``), ``model_only`` (``["model"]``) and
``card`` (``_meta["openai/outputTemplate"]``), ``private`` (``openai/visibility =
"private"``: app only, the OpenAI Apps SDK's way), ``supports`` (whether its client advertised
MCP Apps support: ``True`` or ``False``), and with ``--extra NAME`` an app-only tool ``NAME``
too. The others answer ``<tool> by <label>``.
Run: ``python tests/apps/app_server.py --label alpha [--extra NAME]`` (stdio).
"""

from __future__ import annotations

import argparse
from typing import Any

import mcp_types as types
from mcp.server.apps import client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--label", default="app")
parser.add_argument("--extra", default=None)
options = parser.parse_args()
label: str = options.label

VIEW = "ui://shared/app.html"
CARD = "ui://widget/card.html"
app = MCPServer("app-server")


def said(tool: str) -> str:
    return f"{tool} by {label}"


@app.tool(meta={"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW})
def show() -> types.CallToolResult:
    """Show the view."""
    text = types.TextContent(type="text", text=said("show"))
    return types.CallToolResult(content=[text], _meta={"ui": {"resourceUri": VIEW}})


@app.tool(meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}})
def refresh() -> str:
    """Refresh the view's data (its app calls it)."""
    return said("refresh")


@app.tool(meta={"ui": {"resourceUri": VIEW, "visibility": ["model"]}})
def model_only() -> str:
    """What only the model may call."""
    return said("model_only")


@app.tool(meta={"openai/outputTemplate": CARD})
def card() -> str:
    """Show a card (an OpenAI Apps SDK widget)."""
    return said("card")


@app.tool(meta={"openai/outputTemplate": CARD, "openai/visibility": "private"})
def private() -> str:
    """What only the card calls."""
    return said("private")


@app.tool()
def supports(ctx: Context[Any]) -> str:
    """Whether this server's client renders MCP Apps views (as it advertised)."""
    return str(client_supports_apps(ctx))


if options.extra is not None:
    extra: str = options.extra
    app.add_tool(
        lambda: said(extra),
        name=extra,
        description="What only this server's app calls.",
        meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}},
    )


@app.resource(VIEW, mime_type="text/html;profile=mcp-app")
def view() -> str:
    return f"<!doctype html><html><body>app of {label}</body></html>"


@app.resource(CARD, mime_type="text/html+skybridge")
def card_view() -> str:
    return f"<!doctype html><html><body>card of {label}</body></html>"


@app.resource("ui://pages/{page}", mime_type="text/html;profile=mcp-app")
def page(page: str) -> str:
    return f"<!doctype html><html><body>page {page} of {label}</body></html>"


if __name__ == "__main__":
    app.run()
