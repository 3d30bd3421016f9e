"""MCP Apps through the registry: the views tools name, and who may see and call a tool.

An MCP App (the ``io.modelcontextprotocol/ui`` extension, SEP-1865) is a tool whose
``_meta`` names a ``ui://`` resource, an HTML view the host renders and talks to. Three
things of it pass through the registry whole:

- **The view's URI.** The registry publishes a server's ``ui://rest`` as
  ``ui://<namespace>/rest`` (`mcpmount.catalog.registry_uri`): hosts read a view only under
  the ``ui://`` scheme (the ext-apps host refuses any other), and two servers that both
  name ``ui://x/app.html`` keep apart. Every reference a tool makes to it is rewritten the
  same way: ``_meta.ui.resourceUri``, the older flat ``_meta["ui/resourceUri"]``, and the
  OpenAI Apps SDK's ``_meta["openai/outputTemplate"]``, in definitions and in results.
- **Visibility.** ``_meta.ui.visibility`` says who sees a tool: ``["model", "app"]`` when
  it is absent (``["app"]`` for the OpenAI Apps SDK's ``openai/visibility = "private"``).
  A tool without ``"model"`` is left out of what the model is shown (the manifest,
  ``tool_search``), as a host leaves it out of its agent's tools; it stays callable.
- **The app's own calls.** A view calls its server's tools by the names it was built with
  (``get-time``), and the host passes them on as they are. So a name that is no public
  name is also looked up among the raw names of the tools an app may call (``"app"`` in
  their visibility) of the servers that ship a view (`app_names`); a raw name two such
  servers share names neither.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import mcp_types

from mcpmount.catalog._uris import UI_SCHEME, published_meta, ui_meta

__all__ = [
    "app_callable",
    "app_names",
    "model_visible",
    "ui_resource_uri",
    "with_app_uris",
]


def ui_resource_uri(tool: mcp_types.Tool) -> str | None:
    """The ``ui://`` URI of the view ``tool`` names, if any (``ui.resourceUri`` first)."""
    meta = tool.meta or {}
    keys = ("ui/resourceUri", "openai/outputTemplate")
    for uri in (ui_meta(meta).get("resourceUri"), *(meta.get(key) for key in keys)):
        if isinstance(uri, str) and uri.startswith(UI_SCHEME):
            return uri
    return None


def _visibility(tool: mcp_types.Tool) -> frozenset[str]:
    """Who sees ``tool``: its ``ui.visibility``, else ``app`` alone for the OpenAI Apps SDK's
    ``openai/visibility = "private"``, else both."""
    meta = tool.meta or {}
    shown = ui_meta(meta).get("visibility")
    if isinstance(shown, list):
        return frozenset(str(who) for who in cast("list[object]", shown))
    if meta.get("openai/visibility") == "private":
        return frozenset(("app",))
    return frozenset(("model", "app"))


def model_visible(tool: mcp_types.Tool) -> bool:
    """Whether the model is shown ``tool``: ``"model"`` in its visibility (the default)."""
    return "model" in _visibility(tool)


def app_callable(tool: mcp_types.Tool) -> bool:
    """Whether an app may call ``tool``: ``"app"`` in its visibility (the default)."""
    return "app" in _visibility(tool)


def app_names(tools: Iterable[mcp_types.Tool]) -> frozenset[str]:
    """The raw names an app of this server calls: none if no tool names a view, else those
    of the tools an app may call."""
    listed = list(tools)
    if not any(ui_resource_uri(tool) for tool in listed):
        return frozenset()
    return frozenset(tool.name for tool in listed if app_callable(tool))


def with_app_uris(namespace: str, tool: mcp_types.Tool, *, prefix: bool) -> mcp_types.Tool:
    """``tool`` with the view URIs of its ``_meta`` as the registry publishes them (itself
    when it names none, or its server keeps its own URIs)."""
    meta = published_meta(namespace, tool.meta, prefix=prefix)
    return tool if meta is tool.meta else tool.model_copy(update={"meta": meta})
