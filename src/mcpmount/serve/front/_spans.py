"""`Spans`: the SDK's server span of each request, only when it can matter.

The SDK's low-level ``Server`` wraps every request in an OpenTelemetry server span
(mcp/server/_otel.py). Without a tracer provider that span does not record, and it
matters only as the carrier of a trace context the request's ``_meta`` brings (it becomes
the current context, so an upstream call's ``traceparent`` continues the caller's trace).
A request without either skips it: its attributes, context attach and detach were a few
percent of a served call.
"""

from __future__ import annotations

from typing import Any

from mcp.server import ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult
from opentelemetry import propagate, trace

__all__ = ["Spans"]


class Spans:
    """The SDK's span middleware, skipped while nothing records and nothing is carried."""

    def __init__(self, traced: OpenTelemetryMiddleware) -> None:
        self._traced = traced

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider) and not (
            ctx.meta and not propagate.get_global_textmap().fields.isdisjoint(ctx.meta)
        ):
            return await call_next(ctx)
        return await self._traced(ctx, call_next)
