"""Mounting, calling and closing real servers (subprocesses and streamable HTTP).

Every test here requests ``no_leaks`` first: after it, no process of any group it
spawned is alive, and no file descriptor, thread or task is left over.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from leaks import LeakChecker
from mcpmount import naming
from mcpmount.config import HttpServer, RegistryConfig, RegistrySettings, StdioServer
from mcpmount.errors import (
    CallTimeoutError,
    ConfigError,
    MountError,
    ResultTooLargeError,
    ServerCrashedError,
    ServerNotRunningError,
    ServerStartError,
    ToolListError,
    UnknownToolError,
)
from mcpmount.processes import group_members
from mcpmount.registry import Registry, open_registry
from support import FIXTURE, alive, fixture, free_port, portfile_process, record_pids, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


class TestMount:
    async def test_a_mounted_server_publishes_namespaced_tools_and_routes_calls(self) -> None:
        """Every tool appears as <namespace>__<tool>, and a call reaches the right server."""
        config = RegistryConfig.from_servers({"one": fixture(), "two": fixture("--tools", "2")})
        async with open_registry(config) as registry:
            record_pids(registry)
            names = {tool.name for tool in registry.tools()}
            assert {"one__echo", "one__add", "two__echo", "two__tool_0", "two__tool_1"} <= names
            result = await registry.call("two__add", {"a": 2, "b": 3})
            assert result.structured_content == {"result": 5}
            assert text_of(await registry.call("one__echo", {"text": "hi"})) == "hi"

    async def test_every_page_of_a_paginated_list_is_registered(self) -> None:
        """tools/list is followed to the last page."""
        names = [f"t{i}" for i in range(7)]
        spec = fixture("--names", json.dumps(names), "--page-size", "2")
        async with Registry() as registry:
            await registry.mount("paged", spec)
            record_pids(registry)
            assert sorted(t.raw_name for t in registry.mounted_tools()) == names

    async def test_names_that_need_sanitizing_get_deterministic_suffixes(self) -> None:
        """Dotted and spaced names become valid public names, distinct and reproducible."""
        raw = ["files.read", "files_read", "weather.get-forecast"]
        async with Registry() as registry:
            await registry.mount("legacy", fixture("--names", json.dumps(raw)))
            record_pids(registry)
            table = {t.raw_name: t.name for t in registry.mounted_tools()}
        assert table["files_read"] == "legacy__files_read"
        assert table["files.read"] == naming.public_name("legacy", "files.read")
        assert table["files.read"] != table["files_read"]
        assert all(naming.public_name("legacy", r) == n for r, n in table.items())

    async def test_a_server_that_fails_to_start_registers_nothing(self) -> None:
        """A crash before the handshake is an error naming the server, with its stderr tail."""
        async with Registry() as registry:
            with pytest.raises(ServerStartError) as caught:
                await registry.mount("broken", fixture("--crash-on-start"))
            assert caught.value.server == "broken"
            assert "exited with code 1" in str(caught.value)
            assert "fatal: bad config" in str(caught.value)
            assert registry.tools() == []
            assert registry.status() == []

    async def test_a_missing_command_is_named_in_the_error(self) -> None:
        """A command that does not exist fails at once with a hint."""
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="not found; check `command`"):
                await registry.mount("ghost", StdioServer(command="/nonexistent/mcp-server"))

    async def test_a_server_that_never_answers_fails_at_the_startup_timeout(self) -> None:
        """A silent server costs the startup timeout plus a bounded reap, not forever."""
        async with Registry() as registry:
            began = time.perf_counter()
            with pytest.raises(ServerStartError, match="within 1 s"):
                await registry.mount("silent", fixture("--no-init", startup_timeout=1))
            assert time.perf_counter() - began < 1 + 2 + 2 + 2
            assert registry.mounted_tools() == []

    async def test_an_invalid_tool_list_refuses_the_whole_server(self) -> None:
        """A duplicate raw name refuses the server; nothing of it is registered."""
        async with Registry() as registry:
            with pytest.raises(ToolListError) as caught:
                await registry.mount("dup", fixture("--names", json.dumps(["a", "b", "a"])))
            assert caught.value.server == "dup"
            assert caught.value.tool == "a"
            assert registry.mounted_tools() == []

    async def test_a_name_breaking_sep986_is_refused_or_skipped_by_policy(self) -> None:
        """Spaces in a raw name refuse the server, unless invalid_names = "skip"."""
        names = json.dumps(["ok", "bad name"])
        async with Registry() as registry:
            with pytest.raises(ToolListError, match="SEP-986"):
                await registry.mount("strict", fixture("--names", names))
            await registry.mount("lenient", fixture("--names", names, invalid_names="skip"))
            record_pids(registry)
            assert [t.name for t in registry.mounted_tools()] == ["lenient__ok"]

    async def test_a_name_clash_inside_one_server_names_both_tools(self) -> None:
        """A raw name equal to another's sanitized form is an error naming both raw names."""
        clash = naming.public_name("ns", "x.y").removeprefix("ns__")
        async with Registry() as registry:
            with pytest.raises(ToolListError, match=r"'x\.y'") as caught:
                await registry.mount("ns", fixture("--names", json.dumps(["x.y", clash])))
            assert clash in str(caught.value)
            assert registry.mounted_tools() == []

    async def test_a_namespace_already_mounted_is_refused(self) -> None:
        """Mounting a namespace twice is an error; the first stays intact."""
        async with Registry() as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            with pytest.raises(ServerStartError, match="already mounted"):
                await registry.mount("one", fixture())
            assert text_of(await registry.call("one__echo", {"text": "still"})) == "still"

    async def test_an_optional_server_failing_leaves_the_others_up(self) -> None:
        """required = false: the failure is reported and the healthy servers mount."""
        config = RegistryConfig.from_servers(
            {
                "good": fixture(),
                "bad": fixture("--crash-on-start", required=False),
                "also": fixture(),
            }
        )
        async with open_registry(config) as registry:
            record_pids(registry)
            assert set(registry.failures) == {"bad"}
            assert [row.server for row in registry.status()] == ["also", "good"]
            assert text_of(await registry.call("also__echo", {"text": "up"})) == "up"

    async def test_a_required_server_failing_closes_everything_and_lists_the_failure(
        self, no_leaks: LeakChecker
    ) -> None:
        """One MountError names the failed server; the healthy one was started and reaped."""
        config = RegistryConfig.from_servers(
            {"good": fixture("--startup-delay", "0.2"), "bad": fixture("--crash-on-start")}
        )
        with pytest.raises(MountError) as caught:
            async with open_registry(config, fail_fast=False):
                pytest.fail("the body must not run")
        assert set(caught.value.failures) == {"bad"}
        assert "server 'bad'" in str(caught.value)

    async def test_ten_slow_servers_mount_concurrently(self) -> None:
        """Ten servers that each take 2 s to get ready are all started before the first of
        them can be ready: mounting one does not wait for another. (Bounded by the process
        start times, which the machine's load cannot stretch by seconds, not by the total
        time, which it can.)"""
        servers = {f"s{i}": fixture("--startup-delay", "2") for i in range(10)}
        began = time.perf_counter()
        async with open_registry(RegistryConfig.from_servers(servers)) as registry:
            elapsed = time.perf_counter() - began
            record_pids(registry)
            rows = registry.status()
            starts = [_started_at(row.pid) for row in rows if row.pid is not None]
        assert len(starts) == 10
        spread = max(starts) - min(starts)
        assert spread < 2, f"the 10 servers were started over {spread:.1f} s: one waited"
        assert elapsed < 60, f"10 x 2 s servers took {elapsed:.1f} s to mount"


class TestClose:
    async def test_a_helper_forked_by_the_server_dies_on_close(self, tmp_path: Path) -> None:
        """The leader exits on EOF; the helper it forked into its group is swept."""
        pidfile = tmp_path / "pids"
        async with Registry() as registry:
            close = await registry.mount(
                "forker", fixture("--spawn-helper", "--pidfile", str(pidfile))
            )
            record_pids(registry)
            pids = dict(line.split() for line in pidfile.read_text().splitlines())
            helper = int(pids["helper"])
            assert alive(helper)
            await close()
        with anyio.fail_after(3):
            while alive(helper):
                await anyio.sleep(0.02)

    async def test_a_closer_works_from_another_task_twice_and_concurrently(self) -> None:
        """Closing is idempotent, works from any task, and drops the server's names."""
        async with Registry() as registry:
            close = await registry.mount("one", fixture())
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            async with anyio.create_task_group() as tg:
                tg.start_soon(close)
                tg.start_soon(close)
            await close()
            assert registry.tools() == []
            assert registry.status() == []
            assert group_members(pid) == []
            with pytest.raises(UnknownToolError):
                await registry.call("one__echo", {"text": "x"})

    async def test_a_server_ignoring_eof_and_sigterm_is_killed_within_the_bound(self) -> None:
        """stdin close, SIGTERM, SIGKILL: a stubborn server is gone within about 4.5 s."""
        async with Registry() as registry:
            close = await registry.mount("stubborn", fixture("--ignore-eof", "--ignore-term"))
            record_pids(registry)
            pid = registry.status()[0].pid
            assert pid is not None
            began = time.perf_counter()
            await close()
            assert time.perf_counter() - began < 6
            assert group_members(pid) == []

    async def test_leaving_the_registry_after_an_error_closes_every_server(self) -> None:
        """An exception in the body still reaps every server."""
        pids: list[int] = []
        config = RegistryConfig.from_servers({"a": fixture(), "b": fixture()})

        async def agent() -> None:
            async with open_registry(config) as registry:
                record_pids(registry)
                pids.extend(row.pid for row in registry.status() if row.pid is not None)
                raise RuntimeError("agent failed")

        with pytest.raises(RuntimeError, match="agent failed"):
            await agent()
        assert len(pids) == 2
        assert all(group_members(pid) == [] for pid in pids)

    async def test_cancelling_the_host_during_mount_reaps_the_server(self) -> None:
        """A cancelled mount leaves no process and no names."""
        async with Registry() as registry:
            with anyio.move_on_after(0.5):
                await registry.mount("slow", fixture("--startup-delay", "5"))
            assert registry.status() == []


class TestCall:
    async def test_an_error_result_is_returned_not_raised(self) -> None:
        """isError from the tool reaches the caller as a result the model can see."""
        async with Registry() as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            result = await registry.call("one__fail", {"message": "disk full"})
            assert result.is_error
            assert "disk full" in text_of(result)

    async def test_an_unknown_tool_suggests_close_names(self) -> None:
        """A typo gets the nearest real names."""
        async with Registry() as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            with pytest.raises(UnknownToolError, match="one__echo"):
                await registry.call("one__ecko", {})

    async def test_a_call_that_times_out_says_the_outcome_is_unknown(self) -> None:
        """The timeout error names server and tool; the server stays usable."""
        async with Registry() as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            with pytest.raises(CallTimeoutError, match="outcome is unknown") as caught:
                await registry.call("one__sleep", {"seconds": 10}, timeout=0.3)
            assert caught.value.server == "one"
            assert caught.value.tool == "one__sleep"
            assert text_of(await registry.call("one__echo", {"text": "ok"})) == "ok"

    async def test_a_result_over_the_limit_is_refused_not_truncated(self) -> None:
        """The error says the tool ran."""
        settings = RegistrySettings(max_result_bytes=10_000)
        async with Registry(settings) as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            with pytest.raises(ResultTooLargeError, match="the tool ran"):
                await registry.call("one__big", {"n": 20_000})
            assert text_of(await registry.call("one__big", {"n": 100})) == "x" * 100

    async def test_a_crash_on_one_server_leaves_a_call_on_another_untouched(self) -> None:
        """Server A dies mid-call; server B's in-flight call completes; A fails fast after."""
        async with Registry() as registry:
            await registry.mount("a", fixture())
            await registry.mount("b", fixture())
            record_pids(registry)
            results: dict[str, str] = {}

            async def slow_on_b() -> None:
                results["b"] = text_of(await registry.call("b__sleep", {"seconds": 1.0}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_on_b)
                await anyio.sleep(0.1)
                with pytest.raises(ServerCrashedError, match="exited with code 3"):
                    await registry.call("a__crash", {})
            assert results["b"] == "slept 1.0s" or results["b"].startswith("slept")
            with pytest.raises(ServerNotRunningError, match="exited with code 3"):
                await registry.call("a__echo", {"text": "x"})
            state = {row.server: row.state for row in registry.status()}
            assert state == {"a": "failed", "b": "ready"}

    async def test_calls_run_concurrently_on_one_server(self) -> None:
        """Five 0.5 s calls on one server take about 0.5 s, not 2.5 s."""
        async with Registry() as registry:
            await registry.mount("one", fixture())
            record_pids(registry)
            began = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(5):
                    tg.start_soon(registry.call, "one__sleep", {"seconds": 0.5})
            assert time.perf_counter() - began < 2.0


class TestHttp:
    async def test_an_http_server_mounts_and_answers_calls(self, http_server: str) -> None:
        """Streamable HTTP on 127.0.0.1 with an OS-chosen port."""
        async with Registry() as registry:
            await registry.mount("web", HttpServer(url=http_server))
            names = {tool.name for tool in registry.tools()}
            assert "web__echo" in names
            assert text_of(await registry.call("web__echo", {"text": "over http"})) == "over http"
            assert registry.status()[0].transport == "http"

    async def test_a_refused_connection_names_the_server_and_url(self) -> None:
        """Nothing listens on the port: a prompt, clear error."""
        port = free_port()
        async with Registry() as registry:
            with pytest.raises(
                ServerStartError, match=f"cannot connect to http://127.0.0.1:{port}"
            ):
                await registry.mount("down", HttpServer(url=f"http://127.0.0.1:{port}/mcp"))

    async def test_a_wrong_path_reports_the_http_status(self, http_server: str) -> None:
        """A 404 says there is no MCP endpoint there."""
        async with Registry() as registry:
            with pytest.raises(ServerStartError, match="HTTP 404"):
                await registry.mount("lost", HttpServer(url=http_server.replace("/mcp", "/nope")))

    async def test_an_http_server_crash_mid_call_does_not_disturb_a_stdio_call(
        self, tmp_path: Path
    ) -> None:
        """The HTTP server process dies during a call; the stdio server's call completes."""
        portfile = tmp_path / "port"
        command = [sys.executable, FIXTURE, "--http", "--portfile", str(portfile)]
        async with (
            portfile_process(command, portfile, tmp_path / "web.log") as (url, _),
            Registry() as registry,
        ):
            await registry.mount("web", HttpServer(url=url))
            await registry.mount("local", fixture())
            record_pids(registry)
            done: list[str] = []

            async def slow_local() -> None:
                done.append(text_of(await registry.call("local__sleep", {"seconds": 1.0})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_local)
                await anyio.sleep(0.2)
                with pytest.raises((ServerCrashedError, ServerNotRunningError)):
                    await registry.call("web__crash", {})
            assert done
            assert done[0].startswith("slept")
            assert text_of(await registry.call("local__echo", {"text": "fine"})) == "fine"


async def test_a_bad_namespace_in_mount_all_is_a_config_error_before_anything_starts() -> None:
    """One ConfigError naming the namespace; no server is started."""
    async with Registry() as registry:
        with pytest.raises(ConfigError, match=r"servers\.Bad"):
            await registry.mount_all({"Bad": fixture(), "ok": fixture()})
        assert registry.status() == []


async def test_leaving_the_registry_cuts_a_mount_in_progress_short() -> None:
    """A server still starting when the registry closes is reaped at once, not awaited."""
    began = 0.0
    async with Registry() as registry:

        async def slow_mount() -> None:
            with pytest.raises(ServerStartError):
                await registry.mount("slow", fixture("--startup-delay", "20"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_mount)
            await anyio.sleep(0.5)
            began = time.perf_counter()
            await registry.aclose()
    assert time.perf_counter() - began < 5


def _started_at(pid: int) -> float:
    """When process ``pid`` started, in seconds since boot (/proc/<pid>/stat's starttime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")
