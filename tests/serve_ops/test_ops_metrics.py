"""``/metrics`` of `mcpmount serve --transport http`, scraped over HTTP and parsed with
prometheus_client's own text parser."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import prometheus_client
import pytest
from mcp import Client, MCPError

from mcpmount.config import RegistrySettings
from mcpmount.errors import CallTimeoutError
from mcpmount.registry import CallEvent, Registry, SearchEvent
from mcpmount.serve import Host, RegistryServer
from mcpmount.upstream import ServerState
from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    served_http,
    wait_for_tool,
    write_config,
)
from serve_ops.ops_support import META, Samples, base_of, front_over_http, scrape, series_of, value
from support import fixture, fixture_server, stdio_spec

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


async def test_calls_errors_latency_search_and_states_are_counted_by_server_and_tool(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, fixture_server("fx", extra='defer = ["add"]'))
    async with served_http(config, tmp_path) as (url, _), connected(Client(url)) as client:
        await wait_for_tool(client, "fx__echo")
        for text in ("a", "b"):
            await client.call_tool("fx__echo", {"text": text})
        assert (await client.call_tool("fx__fail", {"message": "no"})).is_error
        with pytest.raises(MCPError):
            await client.call_tool("fx__no_such_tool", {})
        found = await client.call_tool("tool_search", {"query": "add two integers"})
        assert not found.is_error
        samples = await scrape(base_of(url))

    echo = {"server": "fx", "tool": "fx__echo"}
    fail = {"server": "fx", "tool": "fx__fail"}
    assert value(samples, "mcpmount_tool_calls_total", **echo) == 2
    assert value(samples, "mcpmount_tool_calls_total", **fail) == 1
    assert value(samples, "mcpmount_tool_call_errors_total", **fail, error="tool_error") == 1
    assert value(samples, "mcpmount_tool_call_errors_total", **echo, error="tool_error") is None
    assert value(samples, "mcpmount_tool_call_duration_seconds_count", **echo) == 2
    assert value(samples, "mcpmount_tool_call_duration_seconds_bucket", **echo, le="+Inf") == 2
    seconds = value(samples, "mcpmount_tool_call_duration_seconds_sum", **echo)
    assert seconds is not None
    assert 0 < seconds < BEHAVIOUR
    assert value(samples, "mcpmount_tool_search_duration_seconds_count") == 1
    # Only mounted tools are labels: an unknown name leaves no series behind.
    assert series_of(samples, "tool") == {"fx__echo", "fx__fail"}
    _assert_state(samples, "fx", ServerState.READY)
    assert value(samples, "mcpmount_server_restarts_total", server="fx") == 0
    assert value(samples, "mcpmount_server_tools", server="fx") == 7


async def test_a_restart_and_a_failed_optional_server_show_in_the_server_metrics(
    tmp_path: Path,
) -> None:
    config = write_config(
        tmp_path,
        fixture_server("fx", extra='restart = "on-failure"'),
        fixture_server("gone", "--crash-on-start", extra="required = false"),
    )
    async with served_http(config, tmp_path) as (url, _), connected(Client(url)) as client:
        await wait_for_tool(client, "fx__echo")
        assert (await client.call_tool("fx__crash", {})).is_error  # it exits mid-call
        with anyio.fail_after(STARTUP):
            while True:
                samples = await scrape(base_of(url))
                restarts = value(samples, "mcpmount_server_restarts_total", server="fx")
                ready = value(samples, "mcpmount_server_state", server="fx", state="ready")
                if restarts == 1 and ready == 1:
                    break
                await anyio.sleep(0.1)
    _assert_state(samples, "fx", ServerState.READY)
    _assert_state(samples, "gone", ServerState.FAILED)
    crash = {"server": "fx", "tool": "fx__crash", "error": "ServerCrashedError"}
    assert value(samples, "mcpmount_tool_call_errors_total", **crash) == 1


async def test_the_metrics_live_in_the_front_s_own_collector_registry() -> None:
    """Nothing goes to prometheus_client's process-wide registry, and each front counts
    only what it observed."""
    async with front_over_http({"meta": stdio_spec(META)}) as (host, base):
        await host.front.registry.call("meta__meta", {})
        samples = await scrape(base)
        other = Host(RegistryServer(host.front.registry))
        await host.front.registry.call("meta__meta", {})
        assert value(await scrape(base), "mcpmount_tool_calls_total", **_META) == 2
        second = other.metrics.exposition().decode()
    assert value(samples, "mcpmount_tool_calls_total", **_META) == 1
    assert 'mcpmount_tool_calls_total{server="meta",tool="meta__meta"} 1.0' in second
    assert not [m for m in prometheus_client.REGISTRY.collect() if m.name.startswith("mcpmount")]


async def test_observers_hear_of_every_outcome_and_a_failing_one_changes_nothing() -> None:
    calls: list[CallEvent] = []
    searches: list[SearchEvent] = []

    def broken(event: CallEvent) -> None:
        raise RuntimeError("an observer's bug")

    async with Registry(RegistrySettings(startup_timeout=15, defer_all=True)) as registry:
        await registry.mount_all({"fx": fixture()})
        registry.observers.on_call(broken)
        stop = registry.observers.on_call(calls.append)
        registry.observers.on_search(searches.append)
        assert text(await registry.call("fx__echo", {"text": "hi"})) == "hi"
        await registry.call("fx__fail", {"message": "no"})
        with pytest.raises(CallTimeoutError):
            await registry.call("fx__sleep", {"seconds": 30}, timeout=0.5)
        with anyio.move_on_after(0.5) as gave_up:  # the caller gives up first
            await registry.call("fx__sleep", {"seconds": 30})
        assert gave_up.cancelled_caught
        registry.view().tool_search({"query": "echo"})
        stop()
        await registry.call("fx__echo", {"text": "unheard"})

    assert [(e.server, e.tool, e.error) for e in calls] == [
        ("fx", "fx__echo", None),
        ("fx", "fx__fail", "tool_error"),
        ("fx", "fx__sleep", "CallTimeoutError"),
        ("fx", "fx__sleep", "cancelled"),
    ]
    assert 0.5 <= calls[2].seconds < BEHAVIOUR
    assert len(searches) == 1
    assert searches[0].found >= 1


_META = {"server": "meta", "tool": "meta__meta"}


def _assert_state(samples: Samples, server: str, state: ServerState) -> None:
    for each in ServerState:
        expected = 1 if each is state else 0
        assert value(samples, "mcpmount_server_state", server=server, state=each) == expected


def text(result: mcp_types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
