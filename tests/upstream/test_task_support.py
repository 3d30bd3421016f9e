"""Task-required tools are mounted like any other and keep their ``execution``; a call of
one is sent as a task (tests/tasks runs real ones); ``"optional"`` and ``"forbidden"``
tools are plain calls.

``execution`` exists on the 2025-11-25 wire only (tasks left the core protocol in
2026-07-28), so only that era can declare it.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import json
import logging

import pytest

from mcpmount.registry import Registry
from support import fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")


def _tool(name: str, support: str | None) -> dict[str, object]:
    tool: dict[str, object] = {"name": name, "inputSchema": {"type": "object"}}
    return tool | ({"execution": {"taskSupport": support}} if support else {})


TOOLS = json.dumps(
    [
        _tool("needs_task", "required"),
        _tool("may_task", "optional"),
        _tool("no_task", "forbidden"),
        _tool("plain", None),
    ]
)


async def test_task_tools_are_mounted_and_one_that_needs_a_task_answers_even_without_tasks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """2025-11-25: every tool is listed, searchable and callable, with its ``execution``
    kept and no warning; the required one is sent as a task, which this server (it does
    no tasks) ignores and answers at once, as the protocol asks of it."""
    caplog.set_level(logging.WARNING, logger="mcpmount")
    async with Registry() as registry:
        await registry.mount("t", fixture("--raw-tools", TOOLS, protocol="legacy"))
        record_pids(registry)
        names = ["t__may_task", "t__needs_task", "t__no_task", "t__plain"]
        assert [tool.name for tool in registry.tools()] == names
        found = registry.search("select:t__needs_task,t__may_task")
        assert sorted(hit.tool.name for hit in found.hits) == ["t__may_task", "t__needs_task"]
        assert text_of(await registry.call("t__needs_task", {})) == "needs_task {}"
        assert text_of(await registry.call("t__may_task", {"x": 1})) == 'may_task {"x": 1}'
        execution = registry.get("t__needs_task").definition.execution
        assert execution is not None
        assert execution.task_support == "required"
    assert not [r for r in caplog.records if "task" in r.getMessage()]


async def test_in_the_2026_era_no_tool_can_require_a_task_so_every_tool_is_a_plain_call() -> None:
    """The 2026-07-28 wire has no ``execution``: the same server's tools all mount, and the
    server answers each as a plain call."""
    async with Registry() as registry:
        await registry.mount("t", fixture("--raw-tools", TOOLS))
        record_pids(registry)
        assert len(registry.tools()) == 4
        assert all(tool.execution is None for tool in registry.tools())
        assert text_of(await registry.call("t__needs_task", {})) == "needs_task {}"
