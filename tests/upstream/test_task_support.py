"""Task-required tools: mcpmount never drives task-augmented calls, so a tool whose
``execution.taskSupport`` is ``"required"`` is not mounted (it could be listed, never
called); ``"optional"`` and ``"forbidden"`` tools are plain calls.

``execution`` exists on the 2025-11-25 wire only (tasks left the core protocol in
2026-07-28), so only that era can declare it.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import json
import logging

import pytest

from mcpmount.errors import UnknownToolError
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


async def test_a_task_required_tool_is_not_mounted_and_an_optional_one_is_called(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """2025-11-25: the required tool is not listed, searchable or callable, with a warning
    naming it; the optional one is listed and called normally."""
    caplog.set_level(logging.WARNING, logger="mcpmount")
    async with Registry() as registry:
        await registry.mount("t", fixture("--raw-tools", TOOLS, protocol="legacy"))
        record_pids(registry)
        assert [tool.name for tool in registry.tools()] == ["t__may_task", "t__no_task", "t__plain"]
        found = registry.search("select:t__needs_task,t__may_task")
        assert [hit.tool.name for hit in found.hits] == ["t__may_task"]
        with pytest.raises(UnknownToolError):
            await registry.call("t__needs_task", {})
        assert text_of(await registry.call("t__may_task", {"x": 1})) == 'may_task {"x": 1}'
        assert registry.get("t__may_task").definition.execution is not None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'t'" in w and "'needs_task'" in w and "task" in w for w in warnings), warnings


async def test_in_the_2026_era_no_tool_can_require_a_task_so_every_tool_is_a_plain_call() -> None:
    """The 2026-07-28 wire has no ``execution``: the same server's tools all mount, and the
    server answers each as a plain call."""
    async with Registry() as registry:
        await registry.mount("t", fixture("--raw-tools", TOOLS))
        record_pids(registry)
        assert len(registry.tools()) == 4
        assert all(tool.execution is None for tool in registry.tools())
        assert text_of(await registry.call("t__needs_task", {})) == "needs_task {}"
