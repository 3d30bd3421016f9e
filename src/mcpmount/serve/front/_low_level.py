"""The SDK's low-level server as the front runs it: it advertises what the front sends.

`FrontServer` defaults the handshake options to every list's ``listChanged`` and adds the
2025-11-25 ``tasks`` capability, whichever path (stdio, HTTP, stateless) builds them.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp.server import InitializationOptions, NotificationOptions, Server

from mcpmount.serve.tasks import server_capability

__all__ = ["FrontServer"]


class FrontServer(Server[Any]):
    """The SDK's low-level server, advertising the change notices the front sends.

    The HTTP session manager (mcp/server/streamable_http_manager.py) and the stateless
    path serve each connection without our options: the SDK's runner then falls back to
    ``create_initialization_options()`` with no arguments, which would advertise
    ``listChanged: false``. Defaulting the options here makes every path advertise what
    the front does; the 2026-07-28 era derives the same flags from the served
    ``subscriptions/listen``.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        if notification_options is None:
            notification_options = NotificationOptions(
                prompts_changed=True, resources_changed=True, tools_changed=True
            )
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> mcp_types.ServerCapabilities:
        """The SDK's, with the 2025-11-25 ``tasks`` capability (a 2026 answer drops it)."""
        got = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        return got.model_copy(update={"tasks": server_capability()})
