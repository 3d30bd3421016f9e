"""`registry.call` of a tool that can only run as a task: server-everything's
`simulate-research-query`, which a plain call cannot run, runs to its end through the
library as a task, its status reaching the caller as progress; a caller that gives up
cancels the task upstream.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import anyio
import pytest
from tasks_support import RESEARCH, RUN, STARTUP

from mcpmount.config import ServerSpec
from mcpmount.errors import CallTimeoutError
from mcpmount.registry import Registry
from support import record_pids, text_of

pytestmark = [pytest.mark.usefixtures("no_leaks")]


async def test_a_task_only_tool_runs_to_its_end_with_its_status_as_progress(
    everything: ServerSpec,
) -> None:
    """The report names the topic, and each stage the server reported reached
    ``progress`` in order, with increasing numbers."""
    reported: list[tuple[float, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, message))

    async with Registry() as registry:
        with anyio.fail_after(STARTUP):
            await registry.mount("everything", everything)
        record_pids(registry)
        tool = registry.get(RESEARCH)
        assert tool.definition.execution is not None
        assert tool.definition.execution.task_support == "required"
        with anyio.fail_after(RUN):
            result = await registry.call(
                RESEARCH, {"topic": "tide pools"}, progress=report, timeout=RUN
            )
    assert not result.is_error
    assert "# Research Report: tide pools" in text_of(result)
    messages = [message for _, message in reported]
    stages = ["Gathering sources...", "Analyzing content...", "Generating report..."]
    assert list(dict.fromkeys(m for m in messages if m in stages)) == stages
    numbers = [done for done, _ in reported]
    assert numbers == sorted(set(numbers))


async def test_a_call_that_times_out_cancels_its_task_upstream(everything: ServerSpec) -> None:
    """The call's timeout ends the wait, and by then the server has the task ``cancelled``
    (asked with ``tasks/get``; its id comes from the server's status notices, which reach
    ``registry.tasks`` listeners)."""
    seen: list[tuple[str, str, str]] = []
    async with Registry() as registry:
        with anyio.fail_after(STARTUP):
            await registry.mount("everything", everything)
        record_pids(registry)
        registry.tasks.subscribe(lambda ns, task: seen.append((ns, task.task_id, task.status)))
        with anyio.fail_after(RUN), pytest.raises(CallTimeoutError):
            await registry.call(RESEARCH, {"topic": "slow"}, timeout=1.5)
        [task_id] = {task_id for _, task_id, _ in seen}
        assert ("everything", task_id, "working") in seen
        with anyio.fail_after(RUN):
            task = await registry.tasks.get("everything", task_id)
        assert task.status == "cancelled"
