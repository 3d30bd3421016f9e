"""``run_code`` behind serve: a program's calls take the request path a client's call takes.

A program's call is not a shortcut to the registry. Each one is a ``tools/call`` of the
same request (same principal, session and client), run through the whole middleware chain
of the front's server and then its ``tools/call`` handler, as the SDK runs a request:

- the span and the call log (one record per call the program makes, beside the record of
  the ``run_code`` call itself);
- the `Gate`: a tool hidden from the principal (its namespaces, the policy) is answered
  exactly as a tool that is not mounted;
- the rate limits and caps (`mcpmount.serve.quotas`);
- the handler: the caller's own upstream login (``before_call``), its per-client session,
  the relay of what a server asks (a question for a 2026-era client cannot wait for a new
  round inside a program: that call fails, saying so).

The ``tools`` module holds only what the principal sees, and ``run_code``'s definition
names only the namespaces it sees.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import mcp_types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from pydantic import BaseModel, ValidationError

from mcpmount.codemode import (
    RUN_CODE_NAME,
    code_error,
    python_namespaces,
    read_code,
    run_code_definition,
    run_program,
)
from mcpmount.registry import META_TOOLS, Registry, code_names, code_tools
from mcpmount.serve.access import Door, Principal, principal_of

__all__ = ["CodeFront"]


class CodeFront:
    """``run_code`` for the front's callers (see the module docstring).

    Args:
        registry: The served registry.
        door: What each principal may see.
        server: The front's low-level server: its middleware and ``tools/call`` handler.
    """

    def __init__(self, registry: Registry, door: Door, server: Server[Any]) -> None:
        self._registry = registry
        self._door = door
        self._server = server

    def enabled(self) -> bool:
        """Whether ``run_code`` is served (``[registry.code_mode] enabled``)."""
        return self._registry.settings.code_mode.enabled

    def listed(
        self, ctx: ServerRequestContext[Any, Any], tools: list[mcp_types.Tool]
    ) -> list[mcp_types.Tool]:
        """``tools`` (a caller's list) with ``run_code`` naming the caller's namespaces only."""
        principal = principal_of(ctx)
        if not self._door.limits(principal):
            return tools
        return [
            self._definition(principal) if tool.name == RUN_CODE_NAME else tool for tool in tools
        ]

    def _definition(self, principal: Principal) -> mcp_types.Tool:
        names = code_names(self._registry, self._sees(principal))
        return run_code_definition(python_namespaces(names), self._registry.settings.code_mode)

    def _sees(self, principal: Principal) -> Callable[[str], bool] | None:
        """What of the registry's tools ``principal`` sees (None: all of them)."""
        if not self._door.limits(principal):
            return None
        return lambda name: self._door.sees(principal, "tool", name)

    async def run(
        self, ctx: ServerRequestContext[Any, Any], arguments: Mapping[str, Any] | None
    ) -> mcp_types.CallToolResult:
        """Run the ``run_code`` call of ``ctx``; each call of its program re-enters the
        request path as a ``tools/call`` of ``ctx``."""
        source = read_code(arguments)
        if not isinstance(source, str):
            return source

        async def call(name: str, args: dict[str, Any]) -> mcp_types.CallToolResult:
            if name in META_TOOLS:
                return code_error(f"{name} cannot be called from a program")
            return await self._call(ctx, name, args)

        tools = code_tools(self._registry, self._sees(principal_of(ctx)))
        return await run_program(source, tools, call, self._registry.settings.code_mode)

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        """One call of the program, as a ``tools/call`` request of ``ctx`` (see the
        module docstring); an error answer becomes an error result the program raises."""
        inner = replace(ctx, method="tools/call", params={"name": name, "arguments": arguments})
        chain: CallNext = self._handle
        for middleware in reversed(self._server.middleware):
            chain = functools.partial(_apply, middleware, chain)
        try:
            answer = await chain(inner)
        except MCPError as exc:
            return code_error(exc.error.message)
        except ValidationError as exc:
            problems = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            return code_error(f"{name}: the call is malformed: {problems}")
        return _result(name, answer)

    async def _handle(self, ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        """The server's ``tools/call`` handler, its params validated as the SDK does."""
        entry = self._server.get_request_handler("tools/call")
        if entry is None:  # the front always serves it
            raise MCPError(mcp_types.METHOD_NOT_FOUND, "tools/call is not served")
        params = entry.params_type.model_validate(ctx.params or {}, by_name=False)
        return await entry.handler(ctx, params)


def _apply(
    middleware: ServerMiddleware[Any], call_next: CallNext, ctx: ServerRequestContext[Any, Any]
) -> Any:
    return middleware(ctx, call_next)


def _result(name: str, answer: HandlerResult) -> mcp_types.CallToolResult:
    """The answer of the chain (a handler's model, or a middleware's wire dict) as a result."""
    if isinstance(answer, mcp_types.CallToolResult):
        return answer
    if isinstance(answer, BaseModel):
        answer = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    wire: dict[str, Any] = answer if isinstance(answer, dict) else {}
    if wire.get("resultType") == "input_required":
        return code_error(
            f"{name} asked the client for input, which a call from a program cannot "
            "pass on; call it directly"
        )
    return mcp_types.CallToolResult.model_validate(wire, by_name=False)
