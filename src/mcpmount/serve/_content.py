"""Prompts, resources, templates and completions of a served registry.

Every list is the registry's, in one page: prompts under their public names
(``<namespace>__<prompt>``), resources and templates under registry URIs
(``mcpmount://<namespace>/<uri>``), which route back to their server; a URI the client
got from a tool result (``resource_link``) reads the same way. Like ``tools/list``, the
first list waits for the initial mounts.

What an upstream server asks while answering ``prompts/get`` or ``resources/read`` is
relayed to the downstream client of that request exactly as during ``tools/call``
(`mcpmount.serve._relay`), the 2026-07-28 era's ``InputRequiredResult`` rounds included.

Errors are JSON-RPC errors (these methods have no ``isError``):

==============================  ============================================================
``UnknownPromptError``          ``-32602`` (invalid params), with the registry's suggestions
``UnknownResourceError``        ``-32002`` (resource not found)
``UpstreamError``               the upstream code and message; server and name in ``data``
any other ``RegistryError``     ``-32603`` (internal error) whose message names the server
                                (timeout, crash, not running, too large, not supported)
==============================  ============================================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, NoReturn, TypeVar

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext

from mcpmount.errors import (
    RegistryError,
    UnknownPromptError,
    UnknownResourceError,
    UpstreamError,
)
from mcpmount.registry import Registry
from mcpmount.serve._relay import Relay
from mcpmount.serve._rounds import Downstream

__all__ = ["Content", "raise_for"]

RESOURCE_NOT_FOUND: Final = -32002
"""The MCP spec's error code for a resource that does not exist."""

_Result = TypeVar("_Result")


class Content:
    """The prompt, resource and completion handlers of the front.

    Args:
        registry: The served registry.
        mounted: Waits for the initial mounts (the first list must hold them).
        relay: The relay whose handlers the registry was given, if any.
    """

    def __init__(
        self,
        registry: Registry,
        mounted: Callable[[], Awaitable[None]],
        relay: Relay | None = None,
    ) -> None:
        self._registry = registry
        self._mounted = mounted
        self._relay = relay

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListPromptsResult:
        await self._mounted()
        return mcp_types.ListPromptsResult(prompts=self._registry.prompts())

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        await self._mounted()
        return mcp_types.ListResourcesResult(resources=self._registry.resources())

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        await self._mounted()
        templates = self._registry.resource_templates()
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.GetPromptRequestParams
    ) -> mcp_types.GetPromptResult | mcp_types.InputRequiredResult:
        async def run(downstream: Downstream) -> mcp_types.GetPromptResult:
            return await self._registry.get_prompt(
                params.name, params.arguments, context=downstream
            )

        return await self._answer(lambda: self._relayed(ctx, params, params.name, run))

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult | mcp_types.InputRequiredResult:
        async def run(downstream: Downstream) -> mcp_types.ReadResourceResult:
            return await self._registry.read_resource(params.uri, context=downstream)

        return await self._answer(lambda: self._relayed(ctx, params, params.uri, run))

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CompleteRequestParams
    ) -> mcp_types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        given = params.context.arguments if params.context is not None else None
        return await self._answer(lambda: self._registry.complete(params.ref, argument, given))

    async def _relayed(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.InputResponseRequestParams,
        name: str,
        run: Callable[[Downstream], Awaitable[_Result]],
    ) -> _Result | mcp_types.InputRequiredResult:
        """Run ``run`` for this request, in rounds when the relay runs them (2026 era)."""
        if self._relay is None:
            return await run(Downstream(ctx, self._registry.settings.call_timeout))
        return await self._relay.rounds.call(ctx, params, name, run)

    async def _answer(self, request: Callable[[], Awaitable[_Result]]) -> _Result:
        """Once mounted, send ``request`` to the registry; its errors become JSON-RPC ones."""
        await self._mounted()
        try:
            return await request()
        except RegistryError as exc:
            raise_for(exc)


def raise_for(exc: RegistryError) -> NoReturn:
    """Raise the JSON-RPC error a client can act on for a registry error (see above)."""
    if isinstance(exc, UnknownPromptError):
        raise MCPError(mcp_types.INVALID_PARAMS, str(exc)) from None
    if isinstance(exc, UnknownResourceError):
        raise MCPError(RESOURCE_NOT_FOUND, str(exc), {"uri": exc.uri}) from None
    if isinstance(exc, UpstreamError):
        data = {"server": exc.server, "name": exc.tool}
        raise MCPError(exc.code, exc.upstream_message, data) from None
    raise MCPError(mcp_types.INTERNAL_ERROR, str(exc)) from None
