"""OpenTelemetry: each upstream call is a span under the downstream request's, and the
upstream server receives a ``traceparent`` that continues the same trace.

The chain checked, with the OpenTelemetry SDK recording in this process: the test's span
-> the downstream Client's send span -> the front's server span (the SDK's middleware) ->
the registry's ``tools/call <tool>`` span -> the SDK's upstream send span -> the
``traceparent`` the upstream server (a subprocess) found in its request's ``_meta``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import mcp_types
import pytest
from mcp import Client, MCPError
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from tracing_support import recorded_spans

from mcpmount.config import RegistrySettings
from mcpmount.errors import UpstreamError
from mcpmount.registry import Registry
from serve.serve_support import connected, served_http, write_config
from serve_ops.ops_support import META, front_over_http
from support import fixture, stdio_spec

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

_tracer = trace.get_tracer("tests")

ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
"""Each downstream era as a client reaches it: ``auto`` discovers 2026-07-28."""


def _traceparent(result: mcp_types.CallToolResult) -> tuple[int, int]:
    """(trace id, parent span id) of the ``traceparent`` the meta server received."""
    payload = cast("dict[str, dict[str, str]]", result.structured_content)
    version, trace_id, parent_id, _flags = payload["meta"]["traceparent"].split("-")
    assert version == "00"
    return int(trace_id, 16), int(parent_id, 16)


def _one(spans: Sequence[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    matching = [s for s in spans if s.name == name and s.kind is kind]
    assert len(matching) == 1, [(s.name, s.kind) for s in spans]
    return matching[0]


def _parent_of(span: ReadableSpan) -> int:
    assert span.parent is not None, span.name
    return span.parent.span_id


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_an_upstream_call_is_a_child_span_of_the_served_request_and_sends_its_traceparent(
    mode: str, version: str
) -> None:
    with recorded_spans() as recorder:
        async with (
            front_over_http({"meta": stdio_spec(META)}) as (_, base),
            connected(Client(f"{base}/mcp", mode=mode)) as client,
        ):
            assert client.session.protocol_version == version
            with _tracer.start_as_current_span("agent turn") as turn:
                result = await client.call_tool("meta__meta", {})
        spans = recorder.spans()

    downstream = _one(spans, "MCP send tools/call meta__meta", SpanKind.CLIENT)
    served = _one(spans, "tools/call meta__meta", SpanKind.SERVER)
    ours = _one(spans, "tools/call meta", SpanKind.CLIENT)
    upstream = _one(spans, "MCP send tools/call meta", SpanKind.CLIENT)
    assert _parent_of(downstream) == turn.get_span_context().span_id
    assert _parent_of(served) == _id(downstream)
    assert _parent_of(ours) == _id(served)
    assert _parent_of(upstream) == _id(ours)
    trace_id, parent_id = _traceparent(result)
    assert parent_id == _id(upstream)
    chain = [downstream, served, ours, upstream]
    assert {s.context.trace_id for s in chain if s.context} == {trace_id}
    assert trace_id == turn.get_span_context().trace_id
    assert dict(ours.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "meta",
        "network.transport": "pipe",
        "mcpmount.server": "meta",
        "mcpmount.tool": "meta__meta",
    }
    assert ours.status.status_code is StatusCode.UNSET


async def test_a_failed_upstream_call_s_span_says_how_it_failed() -> None:
    """An ``isError`` result is ``tool_error``; a JSON-RPC error, its code."""
    servers = {"meta": stdio_spec(META), "fx": fixture()}
    with recorded_spans() as recorder:
        async with Registry(RegistrySettings(startup_timeout=15)) as registry:
            await registry.mount_all(servers)
            failed = await registry.call("fx__fail", {"message": "no"})
            with pytest.raises(UpstreamError):
                await registry.call("meta__refuse", {})
        spans = recorder.spans()

    assert failed.is_error
    tool_error = _one(spans, "tools/call fail", SpanKind.CLIENT)
    assert tool_error.attributes is not None
    assert tool_error.attributes["error.type"] == "tool_error"
    assert tool_error.status.status_code is StatusCode.ERROR
    refused = _one(spans, "tools/call refuse", SpanKind.CLIENT)
    assert refused.attributes is not None
    code = str(mcp_types.INVALID_PARAMS)
    assert refused.attributes["error.type"] == code
    assert refused.attributes["rpc.response.status_code"] == code
    assert refused.status.status_code is StatusCode.ERROR
    assert "refused on purpose" in (refused.status.description or "")


async def test_a_call_of_an_unknown_tool_makes_no_upstream_span() -> None:
    with recorded_spans() as recorder:
        async with Registry(RegistrySettings(startup_timeout=15)) as registry:
            await registry.mount_all({"meta": stdio_spec(META)})
            with pytest.raises(Exception, match="meta__nope"):
                await registry.call("meta__nope", {})
        spans = recorder.spans()
    assert not [s for s in spans if s.name.startswith("tools/call")]


async def test_served_without_a_tracer_provider_the_traceparent_still_reaches_the_server(
    tmp_path: Path,
) -> None:
    """`mcpmount serve` configures no OpenTelemetry SDK: it records nothing and adds no
    span, and the upstream server receives the downstream client's own span as parent."""
    config = write_config(
        tmp_path, f'[servers.meta]\ncommand = "{sys.executable}"\nargs = ["{META}"]\n'
    )
    with recorded_spans() as recorder:
        async with (
            served_http(config, tmp_path) as (url, _),
            connected(Client(url)) as client,
        ):
            with _tracer.start_as_current_span("agent turn") as turn:
                result = await client.call_tool("meta__meta", {})
        spans = recorder.spans()

    downstream = _one(spans, "MCP send tools/call meta__meta", SpanKind.CLIENT)
    trace_id, parent_id = _traceparent(result)
    assert trace_id == turn.get_span_context().trace_id
    assert parent_id == _id(downstream)


async def test_a_refused_call_through_the_front_is_an_error_span_under_the_served_request() -> None:
    with recorded_spans() as recorder:
        async with (
            front_over_http({"meta": stdio_spec(META)}) as (_, base),
            connected(Client(f"{base}/mcp")) as client,
        ):
            with pytest.raises(MCPError, match="refused on purpose"):
                await client.call_tool("meta__refuse", {})
        spans = recorder.spans()
    served = _one(spans, "tools/call meta__refuse", SpanKind.SERVER)
    ours = _one(spans, "tools/call refuse", SpanKind.CLIENT)
    assert _parent_of(ours) == _id(served)
    assert ours.status.status_code is StatusCode.ERROR
