"""The leak checker can fail, and the fixture servers work through the raw SDK."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver import MCPServer

from http_fixture import serve_http
from leaks import LeakChecker, LeakError, assert_no_extra_tasks, task_snapshot
from proc_table import process_table
from support import FIXTURE, alive, portfile_process, text_of

# Every test here also runs under the real leak fixture: nested checkers must not interfere.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def devnull() -> TextIO:
    """For `errlog`, which needs a real fileno (opening /dev/null never blocks)."""
    return open(os.devnull, "w")


@asynccontextmanager
async def fixture_client(*flags: str) -> AsyncGenerator[Client]:
    """A legacy-mode Client on fixture_server.py with the given flags; stderr discarded."""
    params = StdioServerParameters(command=sys.executable, args=[FIXTURE, *flags])
    with devnull() as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            yield client


# --- the checker itself ---------------------------------------------------------------------


def test_a_sleep_left_running_in_its_own_session_is_reported_and_killed() -> None:
    """A `sleep` in a new session (the stdio_client spawn shape) outliving the test is a leak."""
    checker = LeakChecker().start()
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    checker.record_group(proc.pid)
    with pytest.raises(LeakError, match=rf"process alive: pid={proc.pid} .*sleep 300"):
        checker.check(timeout=0.2)
    assert proc.wait(timeout=2) == -9  # the checker SIGKILLed it


def test_a_grandchild_that_outlives_its_parent_is_found_by_sampling_alone() -> None:
    """No record_group call: the sampler sees the child's group, the orphan is still caught."""
    checker = LeakChecker().start()
    sh = subprocess.Popen(
        ["sh", "-c", "sleep 300 & echo $!; sleep 0.2"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert sh.stdout is not None
    grandchild = int(sh.stdout.readline())
    sh.stdout.close()
    sh.wait(timeout=2)
    with pytest.raises(LeakError, match=rf"pid={grandchild} "):
        checker.check(timeout=0.2)
    assert not alive(grandchild)  # killed, and given a second to die


def test_an_fd_left_open_is_reported_with_its_target() -> None:
    checker = LeakChecker().start()
    read_fd, write_fd = os.pipe()
    try:
        with pytest.raises(LeakError, match=r"fd \d+ still open -> pipe:\["):
            checker.check(timeout=0.1)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_child_spawned_and_reaped_inside_the_test_passes() -> None:
    with LeakChecker():
        proc = subprocess.Popen(["sleep", "0.05"], start_new_session=True)
        assert proc.wait(timeout=2) == 0


async def test_a_task_left_pending_is_reported_and_cancelled() -> None:
    baseline = task_snapshot()
    event = anyio.Event()

    async def forgotten() -> None:
        await event.wait()

    task = asyncio.get_running_loop().create_task(forgotten(), name="forgotten")
    with pytest.raises(LeakError, match="forgotten"):
        await assert_no_extra_tasks(baseline, timeout=0.1)
    with pytest.raises(asyncio.CancelledError):
        await task


# --- fixture_server.py through the raw SDK --------------------------------------------------


async def test_the_fixture_server_lists_its_tools_and_answers_calls() -> None:
    with anyio.fail_after(15):
        async with fixture_client("--tools", "2") as client:
            listed = await client.list_tools()
            names = [t.name for t in listed.tools]
            assert names == [
                "echo",
                "add",
                "sleep",
                "fail",
                "big",
                "pid",
                "crash",
                "tool_0",
                "tool_1",
            ]
            echoed = await client.call_tool("echo", {"text": "hi"})
            assert text_of(echoed) == "hi"
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"result": 5}
            failed = await client.call_tool("fail", {"message": "boom"})
            assert failed.is_error
            assert "boom" in text_of(failed)
            big = await client.call_tool("big", {"n": 1000})
            assert len(text_of(big)) == 1000


async def test_the_lowlevel_mode_serves_hostile_raw_tools_in_pages(tmp_path: Path) -> None:
    raw = [
        {"name": "get.file", "inputSchema": {"type": "object"}},
        {"name": "get file", "inputSchema": {"type": "object"}},
        {"name": "a" * 300, "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
        {"name": "dup", "inputSchema": {"type": "object"}},
    ]
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(raw))
    with anyio.fail_after(15):
        async with fixture_client("--raw-tools", str(tools_file), "--page-size", "2") as client:
            pages: list[list[str]] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                pages.append([t.name for t in page.tools])
                if (cursor := page.next_cursor) is None:
                    break
            assert pages == [["get.file", "get file"], ["a" * 300, "dup"], ["dup"]]
            result = await client.call_tool("get file", {"x": 1})
            assert text_of(result) == 'get file {"x": 1}'


async def test_the_loop_cursor_mode_repeats_its_cursor() -> None:
    raw = json.dumps([{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(3)])
    with anyio.fail_after(15):
        async with fixture_client("--raw-tools", raw, "--page-size", "2", "--loop-cursor") as c:
            first = await c.list_tools()
            second = await c.list_tools(cursor=first.next_cursor)
            assert first.next_cursor == second.next_cursor == "loop"


async def test_crash_on_start_exits_before_the_handshake(tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    params = StdioServerParameters(command=sys.executable, args=[FIXTURE, "--crash-on-start"])
    with anyio.fail_after(15), errlog.open("w") as err, pytest.raises(Exception) as caught:  # noqa: PT011
        async with Client(stdio_client(params, errlog=err), mode="legacy"):
            pass
    assert "Connection closed" in repr(caught.value)
    assert errlog.read_text() == "fixture: fatal: bad config\n"


async def test_spawn_helper_writes_the_pidfile_and_the_checker_catches_the_helper(
    tmp_path: Path, no_leaks: LeakChecker
) -> None:
    """The helper (same group) survives the SDK close when the leader exits on EOF."""
    pidfile = tmp_path / "pids"
    with anyio.fail_after(15):
        async with fixture_client(
            "--spawn-helper", "--helper-close-fds", "--pidfile", str(pidfile)
        ) as client:
            server_pid = (await client.call_tool("pid", {})).structured_content
    roles = dict(line.split() for line in pidfile.read_text().splitlines())
    assert server_pid == {"result": int(roles["server"])}
    helper = int(roles["helper"])
    assert alive(helper)
    assert process_table()[helper].pgid == int(roles["server"])
    with pytest.raises(LeakError, match=rf"pid={helper} "):
        await no_leaks.acheck(timeout=0.2)
    assert not alive(helper)


async def test_http_mode_serves_on_an_os_chosen_port(tmp_path: Path) -> None:
    portfile = tmp_path / "port"
    command = [sys.executable, FIXTURE, "--http", "--port", "0", "--portfile", str(portfile)]
    async with (
        portfile_process(command, portfile, tmp_path / "server.log") as (url, _),
        Client(url) as client,
    ):
        result = await client.call_tool("add", {"a": 20, "b": 22})
        assert result.structured_content == {"result": 42}


async def test_serve_http_runs_an_app_in_process_and_shuts_down_cleanly() -> None:
    server = MCPServer("inproc")

    @server.tool()
    def hello(name: str) -> str:
        return f"hello {name}"

    with anyio.fail_after(15):
        async with serve_http(server.streamable_http_app()) as url:
            assert url.startswith("http://127.0.0.1:")
            assert url.endswith("/mcp")
            async with Client(url) as client:
                result = await client.call_tool("hello", {"name": "mcp"})
                assert text_of(result) == "hello mcp"


async def test_the_http_server_fixture_yields_a_working_url(http_server: str) -> None:
    with anyio.fail_after(15):
        async with Client(http_server, mode="legacy") as client:
            assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {
                "result": 2
            }
