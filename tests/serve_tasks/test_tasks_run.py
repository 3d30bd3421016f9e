"""server-everything's task-only tool runs as a task through `mcpmount serve`, in both eras,
over stdio and HTTP; a task its client cancels is cancelled on the server; what the task
asks reaches the client that started it.

Real `mcpmount serve` processes, the real server-everything 2026.8.31, SDK Clients: a
handshake-era client (2025-11-25: ``task`` on ``tools/call``, ``tasks/get``,
``tasks/result``, ``tasks/list``, ``tasks/cancel``) and a 2026-07-28 client declaring the
``io.modelcontextprotocol/tasks`` extension (``tasks/get`` with the result inlined,
``tasks/update``, ``tasks/cancel``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import MCPError
from serve_tasks_support import PREFIX, RESEARCH, TASKS, Tasker, serving_http, tasker

from serve.serve_support import BEHAVIOUR

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(120),
]

MODES = [pytest.param("legacy", id="2025-11-25"), pytest.param("auto", id="2026")]


@asynccontextmanager
async def _connected(tmp_path: Path, via: str, mode: str) -> AsyncGenerator[Tasker]:
    if via == "stdio":
        async with tasker(tmp_path, "stdio", mode) as client:
            yield client
        return
    async with serving_http(tmp_path) as url, tasker(tmp_path, "http", mode, url=url) as client:
        yield client


def _report(result: dict[str, object]) -> str:
    """The text of a tool result (the research report)."""
    [block] = mcp_types.CallToolResult.model_validate(result).content
    assert isinstance(block, mcp_types.TextContent)
    return block.text


@pytest.mark.parametrize("via", ["stdio", "http"])
@pytest.mark.parametrize("mode", MODES)
async def test_the_task_only_tool_runs_to_completion_as_a_task(
    tmp_path: Path, via: str, mode: str
) -> None:
    async with _connected(tmp_path, via, mode) as client:
        assert client.modern == (mode == "auto")
        capabilities = client.client.server_capabilities
        assert capabilities is not None
        if client.modern:  # the extension, in server/discover
            assert capabilities.extensions == {TASKS: {}}
        else:  # the handshake's tasks capability
            assert capabilities.tasks is not None
            assert capabilities.tasks.requests is not None
            assert capabilities.tasks.requests.tools is not None
        listed = {tool.name: tool for tool in (await client.client.list_tools()).tools}
        if not client.modern:  # the 2026 era's tools have no execution: the server decides
            execution = listed[RESEARCH].execution
            assert execution is not None
            assert execution.task_support == "required"
        task = await client.start({"topic": "tides"})
        task_id = task["taskId"]
        assert task_id.startswith(PREFIX), task
        assert task["status"] == "working", task
        done = await client.wait(task_id, "completed")
        if client.modern:
            report = _report(done["result"])
            related = done["result"]["_meta"]["io.modelcontextprotocol/related-task"]
        else:
            result = await client.send("tasks/result", {"taskId": task_id})
            report = _report(result)
            related = result["_meta"]["io.modelcontextprotocol/related-task"]
            listed_tasks = (await client.send("tasks/list", {}))["tasks"]
            assert [t["taskId"] for t in listed_tasks] == [task_id]
        assert "# Research Report: tides" in report
        assert related == {"taskId": task_id}  # the server's own id never comes down


@pytest.mark.parametrize("mode", MODES)
async def test_a_task_its_client_cancels_is_cancelled_on_the_server(
    tmp_path: Path, mode: str
) -> None:
    async with _connected(tmp_path, "stdio", mode) as client:
        task_id = (await client.start({"topic": "tides"}))["taskId"]
        answer = await client.send("tasks/cancel", {"taskId": task_id})
        assert answer.get("status", "cancelled") == "cancelled", answer
        # tasks/get asks the server: it says cancelled, and so it stays (its stages
        # would have completed it within four seconds).
        assert (await client.wait(task_id, "cancelled"))["status"] == "cancelled"
        if not client.modern:
            with pytest.raises(MCPError) as raised:  # the server stored no result
                await client.send("tasks/result", {"taskId": task_id})
            assert "no result" in raised.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_what_a_task_asks_reaches_the_client_that_started_it(
    tmp_path: Path, mode: str
) -> None:
    async with _connected(tmp_path, "stdio", mode) as client:
        task_id = (await client.start({"topic": "tides", "ambiguous": True}))["taskId"]
        asking = await client.wait(task_id, "input_required")
        if client.modern:
            # Shown by tasks/get, answered by tasks/update.
            [(key, question)] = asking["inputRequests"].items()
            assert question["method"] == "elicitation/create"
            assert question["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {
                "taskId": task_id
            }
            reply = {"action": "accept", "content": {"interpretation": "historical"}}
            await client.send("tasks/update", {"taskId": task_id, "inputResponses": {key: reply}})
            report = _report((await client.wait(task_id, "completed"))["result"])
        else:
            # Asked on the stream of the client's tasks/result, as the server asks it.
            report = _report(await client.send("tasks/result", {"taskId": task_id}))
            [question] = client.asked
            assert question.meta == {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        assert "# Research Report: tides (historical)" in report


async def test_a_servers_task_status_notices_reach_the_session_that_started_it(
    tmp_path: Path,
) -> None:
    # Heard from a server spoken to in the handshake era (docs/recipes/tasks.md).
    async with tasker(tmp_path, "stdio", "legacy", upstream="legacy") as client:
        task_id = (await client.start({"topic": "tides"}))["taskId"]
        await client.wait(task_id, "completed")
        with anyio.fail_after(BEHAVIOUR):  # the last notice may trail the poll that saw it
            while "completed" not in [notice.status for notice in client.notices.statuses]:
                await anyio.sleep(0.05)
        told = client.notices.statuses
        assert {notice.task_id for notice in told} == {task_id}  # under serve's id only
        messages = [notice.status_message for notice in told]
        assert "Analyzing content..." in messages  # one per stage, as the server sent them


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_does_not_do_tasks_gets_the_task_only_tools_result(
    tmp_path: Path, mode: str
) -> None:
    async with tasker(tmp_path, "stdio", mode, declare=False) as client:
        # A plain tools/call: serve runs the task and waits for it.
        result = await client.client.call_tool(RESEARCH, {"topic": "tides"})
        assert not result.is_error, result
        [block] = result.content
        assert isinstance(block, mcp_types.TextContent)
        assert "# Research Report: tides" in block.text


async def test_a_task_started_before_the_server_mounted_is_a_task(tmp_path: Path) -> None:
    """A client's first request, answered before server-everything is up (no wait for the
    optional servers): serve waits for its server, then answers a task, not a plain call's
    result (which a task-only tool's waited-for result would be)."""
    async with tasker(tmp_path, "stdio", "legacy", first_list_wait=0) as client:
        task = await client.start({"topic": "tides"})  # no list first
        assert task["taskId"].startswith(PREFIX), task
        await client.wait(task["taskId"], "completed")
