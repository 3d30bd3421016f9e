"""The JSON-RPC error a client is told for a registry error, in its protocol era.

Prompts, resources and completions have no ``isError``: what goes wrong is an error answer.

==============================  ============================================================
``UnknownPromptError``          ``-32602`` (invalid params), with the registry's suggestions
``UnknownResourceError``        `resource_not_found`: ``-32602`` in the 2026-07-28 era,
                                ``-32002`` in the handshake era
``UpstreamError``               the upstream code and message; server and name in ``data``
                                (a ``-32002`` told a 2026-era client as ``-32602``)
any other ``RegistryError``     ``-32603`` (internal error) whose message names the server
                                (timeout, crash, not running, too large, not supported)
==============================  ============================================================

An unknown name's suggestions are cut to what the principal may see before it gets here
(`Door.answer_unknown`).
"""

from __future__ import annotations

from typing import Final, NoReturn

import mcp_types
from mcp import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.errors import RegistryError, UnknownPromptError, UnknownResourceError, UpstreamError

__all__ = ["RESOURCE_NOT_FOUND", "raise_for", "resource_not_found"]

RESOURCE_NOT_FOUND: Final = -32002
"""The handshake era's code for a resource that does not exist; the 2026-07-28 revision
retired it (never to be reused) for ``-32602`` (SEP-2164)."""


def resource_not_found(protocol_version: str | None) -> int:
    """The code for a resource that does not exist, as a client of ``protocol_version``
    knows it: ``-32602`` (invalid params) in the 2026-07-28 era, `RESOURCE_NOT_FOUND` in
    the handshake era (None: a client that has not said, answered as the handshake era)."""
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return mcp_types.INVALID_PARAMS
    return RESOURCE_NOT_FOUND


def raise_for(exc: RegistryError, protocol_version: str | None) -> NoReturn:
    """Raise the JSON-RPC error a client of ``protocol_version`` can act on for a registry
    error (see the table above)."""
    if isinstance(exc, UnknownPromptError):
        raise MCPError(mcp_types.INVALID_PARAMS, str(exc)) from None
    if isinstance(exc, UnknownResourceError):
        code = resource_not_found(protocol_version)
        raise MCPError(code, str(exc), {"uri": exc.uri}) from None
    if isinstance(exc, UpstreamError):
        data = {"server": exc.server, "name": exc.tool}
        code = exc.code
        if code == RESOURCE_NOT_FOUND:  # a handshake-era server's "not found", in this era
            code = resource_not_found(protocol_version)
        raise MCPError(code, exc.upstream_message, data) from None
    raise MCPError(mcp_types.INTERNAL_ERROR, str(exc)) from None
