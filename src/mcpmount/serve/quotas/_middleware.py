"""`Quotas`: a server middleware that refuses a tool call past a rate limit or a cap.

It sits behind the visibility gate (`mcpmount.serve.front`): a call of a tool its
principal may not see was already refused there as unknown, so a limit never tells a
client that a hidden tool exists. It looks only at ``tools/call`` (``call_tool``'s inner
name included); anything else, and every call when no rule is configured, passes at the
cost of a method test.

A refused call reaches no server, and is answered with an ``isError`` result, not a
JSON-RPC error: its text (which tool, which limit, when to retry) is then read by the
model, which can wait or do something else, where many hosts show a JSON-RPC error to
the user alone and end the turn. Programs read the same in ``_meta["mcpmount/limit"]``:
``{"tool", "limit", "rule", "retryAfter"}`` (seconds). A task-augmented call is answered
with a JSON-RPC error carrying that in ``data`` instead (its client waits for a task).
A 2026-era call retried with the input it was asked for (``inputResponses``) is the same
call: it is not counted again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

from mcpmount.config import ServeLimits
from mcpmount.errors import UnknownToolError
from mcpmount.registry import Registry
from mcpmount.serve.access import principal_of
from mcpmount.serve.quotas._counters import Counters
from mcpmount.serve.quotas._rules import InFlight, Match, Rules

__all__ = ["LIMIT_META", "Limits", "Quotas"]

LIMIT_META: Final = "mcpmount/limit"
"""The ``_meta`` key of a refusal: what refused it and when to retry."""

_CALL_TOOL: Final = "call_tool"
"""The meta-tool that calls the tool its arguments name (`mcpmount.serve.front`)."""

_CONCURRENCY_RETRY: Final = 1
"""Seconds a call refused by a concurrency cap is told to wait (no one knows when a
running call ends)."""

_RETRIED: Final = ("inputResponses", "requestState")
"""Params of a 2026-era call retried with what it asked for."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What `Quotas` enforces, and where it counts."""

    settings: Callable[[], ServeLimits]
    """The ``[serve.limits]`` table in force; asked on each call, so a reloaded config's
    rules apply from its next call (a rule at the same place with the same ``tools``
    keeps its counts)."""
    counters: Counters
    """Where windows are counted (memory, or the replicas' Redis)."""


class Quotas:
    """Refuse the calls past ``[serve.limits]`` (see the module docstring).

    Args:
        registry: The served registry (whose tool a called name is).
        limits: The rules in force and their counters.
    """

    def __init__(self, registry: Registry, limits: Limits) -> None:
        self._registry = registry
        self._settings = limits.settings
        self._counters = limits.counters
        self._rules = Rules(self._settings())
        self._in_flight = InFlight()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        settings = self._settings()
        if settings is not self._rules.settings:
            self._rules = Rules(settings)
        params = ctx.params or {}
        tool = self._tool(params) if self._rules else None
        if tool is None:
            return await call_next(ctx)
        matches = self._rules.matching(principal_of(ctx), tool)
        if not matches:
            return await call_next(ctx)
        if not any(key in params for key in _RETRIED):
            for match in matches:
                if match.item is None:
                    continue
                spent = await self._counters.hit(settings.strategy, match.item, *match.key)
                if spent is not None:
                    limit = f"{match.item.amount} calls per {_window(match)}"
                    return _refuse(params, tool, match, limit, spent.retry_after)
        full = self._in_flight.enter(matches)
        if full is not None:
            limit = f"{full.rule.concurrency} calls at once"
            return _refuse(params, tool, full, limit, _CONCURRENCY_RETRY)
        try:
            return await call_next(ctx)
        finally:
            self._in_flight.leave(matches)

    def _tool(self, params: Mapping[str, Any]) -> str | None:
        """The public name of the tool ``params`` call (an app's raw name resolved), or the
        name as called when no mounted tool has it: its server may be mounting still (the
        call then waits for it), and a name of no server counts as a call too; None for a
        malformed call (the front answers it)."""
        name: object = params.get("name")
        if name == _CALL_TOOL:
            inner = params.get("arguments")
            name = cast("dict[str, object]", inner).get("name") if isinstance(inner, dict) else None
        if not isinstance(name, str):
            return None
        try:
            return self._registry.get(name).name
        except UnknownToolError:
            return name


def _window(match: Match) -> str:
    """``"2 seconds"``, ``"minute"``: the window of a rate limit, as a sentence says it."""
    assert match.item is not None
    unit = type(match.item).GRANULARITY.name
    return unit if match.item.multiples == 1 else f"{match.item.multiples} {unit}s"


def _refuse(
    params: Mapping[str, Any], tool: str, match: Match, limit: str, retry_after: int
) -> mcp_types.CallToolResult:
    """The answer to a refused call; raises for a task-augmented one."""
    text = (
        f"{tool} was not called: {match.names()} of the serve config allows this client "
        f"{limit}; retry in {retry_after} s"
    )
    data = {"tool": tool, "limit": limit, "rule": match.at + 1, "retryAfter": retry_after}
    if params.get("task") is not None:
        raise MCPError(mcp_types.INVALID_REQUEST, text, {LIMIT_META: data})
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        is_error=True,
        _meta={LIMIT_META: data},
    )
