"""The ``otel`` sink: each request's record is an OpenTelemetry log record of the process's
logger provider, with the record's fields as ``mcp.*`` attributes and no secret.

serve runs in this process (an embedding program's OpenTelemetry SDK is the provider the
sink finds), over HTTP, with the fixture server mounted; an SDK ``Client`` makes an ok
call, a failing call and a call of an unknown tool.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from functools import partial

import anyio
import pytest
from mcp import Client, MCPError
from opentelemetry._logs import SeverityNumber, set_logger_provider
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.registry import Registry
from mcpmount.serve import Host, RegistryServer
from mcpmount.serve.calllog import CallLog, DigestKey, OtelLogs
from serve.serve_support import STARTUP, connected
from support import FIXTURE, stdio_spec

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

SECRET = "calllog-otel-ARG-secret-5c2e"
"""An argument value: no attribute or body may hold it."""

_exporter: InMemoryLogRecordExporter | None = None


def _records() -> InMemoryLogRecordExporter:
    """The in-memory exporter behind this process's logger provider (installed once: a
    process has one)."""
    global _exporter
    if _exporter is None:
        _exporter = InMemoryLogRecordExporter()
        provider = LoggerProvider()
        provider.add_log_record_processor(SimpleLogRecordProcessor(_exporter))
        set_logger_provider(provider)
    _exporter.clear()
    return _exporter


@asynccontextmanager
async def _served(servers: Mapping[str, ServerSpec]) -> AsyncGenerator[str]:
    """serve in this process with the ``otel`` call log; yields the ``/mcp`` URL."""
    async with (
        Registry(RegistrySettings(startup_timeout=15)) as registry,
        anyio.create_task_group() as tg,
    ):
        await registry.mount_all(servers)
        served = RegistryServer(registry)
        served.watch(CallLog(OtelLogs(), served.door, DigestKey(None)))
        stop = anyio.Event()
        urls: list[str] = []
        tg.start_soon(partial(Host(served).run_http, stop, on_ready=urls.append))
        try:
            with anyio.fail_after(STARTUP):
                while not urls:
                    await anyio.sleep(0.01)
            yield urls[0]
        finally:
            stop.set()


def _attributes(record: ReadableLogRecord) -> dict[str, object]:
    return dict(record.log_record.attributes or {})


async def test_each_request_is_a_log_record_with_its_fields_and_no_secret() -> None:
    exporter = _records()
    async with _served({"pub": stdio_spec(FIXTURE)}) as url, connected(Client(url)) as client:
        await client.call_tool("pub__echo", {"text": SECRET})
        failed = await client.call_tool("pub__fail", {})
        assert failed.is_error
        with pytest.raises(MCPError):
            await client.call_tool("pub__nothing_here", {})
    records = [r for r in exporter.get_finished_logs() if r.log_record.body]
    calls = [_attributes(r) for r in records if _attributes(r).get("mcp.method") == "tools/call"]
    outcomes = {(c.get("mcp.name"), c.get("mcp.outcome")) for c in calls}
    assert outcomes == {
        ("pub__echo", "ok"),
        ("pub__fail", "tool_error"),
        ("pub__nothing_here", "unknown"),
    }, calls
    for call in calls:
        assert "mcp.principal" not in call  # no token: a null field is left out
        known = call["mcp.outcome"] != "unknown"
        assert call.get("mcp.server") == ("pub" if known else None)
        assert isinstance(call["mcp.args"], str)  # the digest, never the values
        assert isinstance(call["mcp.duration_ms"], float)
    echo = next(r for r in records if _attributes(r).get("mcp.name") == "pub__echo")
    assert echo.log_record.body == "tools/call pub__echo ok"
    assert echo.log_record.severity_number is SeverityNumber.INFO
    unknown = next(r for r in records if _attributes(r).get("mcp.name") == "pub__nothing_here")
    assert unknown.log_record.severity_number is SeverityNumber.WARN
    every_byte = repr([(r.log_record.body, _attributes(r)) for r in records])
    assert SECRET not in every_byte
