"""What the registry tells a server of MCP Apps: that its client renders them."""

from __future__ import annotations

from typing import Any

from mcp.client.extension import ClientExtension

__all__ = ["AppsSupport"]


class AppsSupport(ClientExtension):
    """The MCP Apps extension (``io.modelcontextprotocol/ui``, SEP-1865), advertised with
    the one view type hosts render.

    A server SHOULD check it before it offers tools bound to a view (the SDKs'
    ``client_supports_apps`` and ``getUiCapability``), so without it such a server would
    hide its apps behind the registry. `mcpmount serve` passes a view and its tools to
    every host whole, and a host that renders no view still gets each tool's text, which
    the spec requires of a server that offers a view.
    """

    identifier = "io.modelcontextprotocol/ui"

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": ["text/html;profile=mcp-app"]}
