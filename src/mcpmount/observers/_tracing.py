"""One OpenTelemetry span per upstream tool call, after the MCP semantic conventions.

What the SDK already does (mcp/shared/jsonrpc_dispatcher.py, mcp/server/_otel.py): every
request it sends is a ``MCP send <method> <name>`` client span whose W3C trace context is
injected into the request's ``params._meta`` (``traceparent``), and every request a
low-level ``Server`` receives is a server span whose parent is extracted from that
``_meta``. The send span knows neither which server a call went to nor its outcome beyond
a JSON-RPC error. This span adds that: ``tools/call <tool>``, a client span around the whole call (a
wait for a (re)starting server included), with

=============================  =======================================================
``mcp.method.name``            ``tools/call``
``gen_ai.operation.name``      ``execute_tool``
``gen_ai.tool.name``           the tool's name on its server (what the server listed)
``network.transport``          ``pipe`` (stdio) or ``tcp`` (HTTP)
``mcpmount.server``            the server's namespace
``mcpmount.tool``              the tool's public name (``<namespace>__<tool>``)
``error.type``                 ``tool_error`` (an ``isError`` result), the JSON-RPC code
                               of an upstream error, or the error's class
                               (``CallTimeoutError``, ``cancelled`` when the caller gave up)
``rpc.response.status_code``   the JSON-RPC code of an upstream error
=============================  =======================================================

It is the current span while the SDK sends, so the SDK's send span is its child and the
``traceparent`` the server receives continues the caller's trace (under ``serve``: the
downstream request's server span).

Only ``opentelemetry-api`` is used (a dependency of ``mcp``): without an SDK's tracer
provider the tracer is a no-op, the span does not record and no attribute is built; the
current span context (a downstream request's, extracted by the SDK) still passes through
to the upstream server's ``traceparent`` unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator

import mcp_types
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from mcpmount.errors import UpstreamError
from mcpmount.tool import MountedTool

__all__ = ["mark_failed", "mark_result", "tracing", "upstream_span"]

_tracer = trace.get_tracer("mcpmount")
"""A proxy: it follows whatever tracer provider the host sets, whenever it sets it."""


def tracing() -> bool:
    """Whether a tracer provider is set (by the host, or ``OTEL_PYTHON_TRACER_PROVIDER``).

    Without one the span would be the caller's span context again, not recording: the
    ``traceparent`` the SDK injects is the same whether or not the call opens it.

    Asked on every call. The API's getter looks the environment variable up each time
    until a provider is set (a failed ``os.environ`` lookup: an exception raised and caught,
    on the hot path of a call nobody traces), so it is asked only once, which loads the
    variable's provider if there is one; after that the global it reads is read directly.
    A variable set after the first call is not seen; ``set_tracer_provider`` always is.
    """
    global _asked
    provider = getattr(trace, "_TRACER_PROVIDER", _GONE)
    if provider is _GONE or not _asked:  # an API without that global: its getter, always
        _asked = True
        return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    return provider is not None


_GONE = object()
_asked = False
"""Whether `tracing` has asked the API's getter (which reads the environment) once."""


@contextlib.contextmanager
def upstream_span(entry: MountedTool, transport: str) -> Generator[Span]:
    """Open the client span of one call of ``entry`` (``transport``: the spec's)."""
    with _tracer.start_as_current_span(
        f"tools/call {entry.raw_name}",
        kind=SpanKind.CLIENT,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        if span.is_recording():
            span.set_attributes(
                {
                    "mcp.method.name": "tools/call",
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": entry.raw_name,
                    "network.transport": "pipe" if transport == "stdio" else "tcp",
                    "mcpmount.server": entry.server,
                    "mcpmount.tool": entry.name,
                }
            )
        yield span


def mark_result(span: Span, result: mcp_types.CallToolResult) -> None:
    """An ``isError`` result is a failed call (the model sees an error)."""
    if result.is_error and span.is_recording():
        span.set_attribute("error.type", "tool_error")
        span.set_status(StatusCode.ERROR)


def mark_failed(span: Span, exc: BaseException, error_type: str) -> None:
    """The call raised ``exc``, classified as ``error_type``."""
    if not span.is_recording():
        return
    if isinstance(exc, UpstreamError):
        code = str(exc.code)
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
    else:
        span.set_attribute("error.type", error_type)
    span.set_status(StatusCode.ERROR, str(exc))
