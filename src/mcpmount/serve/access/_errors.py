"""The JSON-RPC error a client is told for a registry error.

Prompts, resources and completions have no ``isError``: what goes wrong is an error answer.

==============================  ============================================================
``UnknownPromptError``          ``-32602`` (invalid params), with the registry's suggestions
``UnknownResourceError``        ``-32002`` (resource not found)
``UpstreamError``               the upstream code and message; server and name in ``data``
any other ``RegistryError``     ``-32603`` (internal error) whose message names the server
                                (timeout, crash, not running, too large, not supported)
==============================  ============================================================

An unknown name's suggestions are cut to what the principal may see before it gets here
(`Door.answer_unknown`).
"""

from __future__ import annotations

from typing import NoReturn

import mcp_types
from mcp import MCPError

from mcpmount.errors import RegistryError, UnknownPromptError, UnknownResourceError, UpstreamError
from mcpmount.serve.access._principal import RESOURCE_NOT_FOUND

__all__ = ["raise_for"]


def raise_for(exc: RegistryError) -> NoReturn:
    """Raise the JSON-RPC error a client can act on for a registry error (see the table above)."""
    if isinstance(exc, UnknownPromptError):
        raise MCPError(mcp_types.INVALID_PARAMS, str(exc)) from None
    if isinstance(exc, UnknownResourceError):
        raise MCPError(RESOURCE_NOT_FOUND, str(exc), {"uri": exc.uri}) from None
    if isinstance(exc, UpstreamError):
        data = {"server": exc.server, "name": exc.tool}
        raise MCPError(exc.code, exc.upstream_message, data) from None
    raise MCPError(mcp_types.INTERNAL_ERROR, str(exc)) from None
