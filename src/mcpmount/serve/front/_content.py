"""Prompts, resources, templates and completions of a served registry.

Every list is the registry's, in one page: prompts under their public names
(``<namespace>__<prompt>``), resources and templates under registry URIs
(``mcpmount://<namespace>/<uri>``), which route back to their server; a URI the client
got from a tool result (``resource_link``) reads the same way. Like ``tools/list``, the
first list waits for the initial mounts.

What an upstream server asks while answering ``prompts/get`` or ``resources/read`` is
relayed to the downstream client of that request exactly as during ``tools/call``
(`mcpmount.serve.relay`), the 2026-07-28 era's ``InputRequiredResult`` rounds included.

Results go back as the upstream sent them, less its ``_meta`` ``serverInfo`` stamp
(`without_server_info`: downstream, the server is us). An unknown prompt's "did you mean"
names only prompts the principal may see (`mcpmount.serve.access`).

Errors are JSON-RPC errors (these methods have no ``isError``), as
`mcpmount.serve.access.raise_for` tells them in the client's era (an unknown resource
is ``-32602`` in the 2026-07-28 era, ``-32002`` in the handshake era).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types
from mcp.server import ServerRequestContext
from mcp_types import SERVER_INFO_META_KEY

from mcpmount.errors import RegistryError, UnknownPromptError
from mcpmount.registry import Registry
from mcpmount.serve.access import Door, principal_of, raise_for
from mcpmount.serve.relay import Downstream, Relay, client_key

__all__ = ["Content", "without_server_info"]

_Result = TypeVar("_Result")
_Stamped = TypeVar("_Stamped", bound=mcp_types.Result)


class Content:
    """The prompt, resource and completion handlers of the front.

    Args:
        registry: The served registry.
        door: What each principal may see.
        mounted: Waits for the initial mounts (the first list must hold them).
        relay: The relay whose handlers the registry was given, if any.
    """

    def __init__(
        self,
        registry: Registry,
        door: Door,
        mounted: Callable[[], Awaitable[None]],
        relay: Relay | None = None,
    ) -> None:
        self._registry = registry
        self._door = door
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

        return await self._answer(ctx, lambda: self.relayed(ctx, params, params.name, run))

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult | mcp_types.InputRequiredResult:
        async def run(downstream: Downstream) -> mcp_types.ReadResourceResult:
            return await self._registry.read_resource(params.uri, context=downstream)

        return await self._answer(ctx, lambda: self.relayed(ctx, params, params.uri, run))

    async def complete(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CompleteRequestParams
    ) -> mcp_types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        given = params.context.arguments if params.context is not None else None
        whose = client_key(ctx)  # a per_client server completes over its client's session
        return await self._answer(
            ctx, lambda: self._registry.complete(params.ref, argument, given, context=whose)
        )

    async def relayed(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.InputResponseRequestParams,
        name: str,
        run: Callable[[Downstream], Awaitable[_Result]],
    ) -> _Result | mcp_types.InputRequiredResult:
        """Run ``run`` (a call, prompt or read upstream) for this request, in rounds when
        the relay runs them (2026 era); the front's tool calls go through it too."""
        if self._relay is None:
            return await run(Downstream(ctx, self._registry.settings.call_timeout))
        return await self._relay.rounds.call(ctx, params, name, run)

    async def _answer(
        self, ctx: ServerRequestContext[Any, Any], request: Callable[[], Awaitable[_Result]]
    ) -> _Result:
        """Once mounted, send ``request`` to the registry; its errors become JSON-RPC ones,
        an unknown prompt's suggestions limited to what the principal may see."""
        await self._mounted()
        try:
            result = await request()
        except UnknownPromptError as exc:
            raise_for(self._door.answer_unknown(principal_of(ctx), exc), ctx.protocol_version)
        except RegistryError as exc:
            raise_for(exc, ctx.protocol_version)
        if isinstance(result, mcp_types.GetPromptResult | mcp_types.ReadResourceResult):
            return without_server_info(result)
        return result


def without_server_info(result: _Stamped) -> _Stamped:
    """``result`` without the upstream's ``serverInfo`` stamp: the SDK keeps a handler's own,
    and downstream the server is us. Every other ``_meta`` key passes through."""
    if not result.meta or SERVER_INFO_META_KEY not in result.meta:
        return result
    meta = {k: v for k, v in result.meta.items() if k != SERVER_INFO_META_KEY}
    return result.model_copy(update={"meta": meta or None})
