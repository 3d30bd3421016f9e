"""`registry.tasks`: a tool started as a task and come back for (`TaskHandle`), and the
``tasks/*`` requests by server and task id, against server-everything's task-only tool.

The task's question (``ambiguous``: it asks which interpretation is meant) reaches the
registry's elicitation handler, with the context the task was started with, while its
result is awaited; a cancelled task is ``cancelled`` on the server and has no result.
"""

from __future__ import annotations

import anyio
import mcp_types
import pytest
from tasks_support import RESEARCH, RUN, STARTUP

from mcpmount.config import ServerSpec
from mcpmount.errors import NotSupportedError, ServerNotRunningError, UpstreamError
from mcpmount.handlers import Asker, ClientHandlers
from mcpmount.registry import Registry
from support import record_pids, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


async def test_a_started_task_asks_its_question_through_the_registry_and_ends_with_a_result(
    everything: ServerSpec,
) -> None:
    """Started, it is ``working``; its result waits out the question, which the handler
    answers (``programming``), and the report names that interpretation."""
    asked: list[tuple[Asker, str]] = []

    async def elicit(
        asker: Asker, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        asked.append((asker, params.message))
        return mcp_types.ElicitResult(action="accept", content={"interpretation": "programming"})

    async with Registry(handlers=ClientHandlers(elicitation=elicit)) as registry:
        with anyio.fail_after(STARTUP):
            await registry.mount("everything", everything)
        record_pids(registry)
        with anyio.fail_after(RUN):
            handle = await registry.tasks.start(
                RESEARCH, {"topic": "python", "ambiguous": True}, ttl=60_000, context="ctx-7"
            )
            assert (handle.server, handle.tool) == ("everything", RESEARCH)
            assert handle.task.status == "working"
            assert (await handle.status()).task_id == handle.task_id
            listed = await registry.tasks.list("everything")
            assert handle.task_id in {task.task_id for task in listed.tasks}
            result = await handle.result()
    assert "# Research Report: python (programming)" in text_of(result)
    [(asker, message)] = asked
    assert (asker.server, asker.tool) == ("everything", RESEARCH)
    assert asker.context == "ctx-7"
    assert "python" in message


async def test_a_cancelled_task_is_cancelled_on_its_server_and_has_no_result(
    everything: ServerSpec,
) -> None:
    """``cancel`` answers ``cancelled``; ``tasks/get`` says so after; its result is the
    server's error."""
    async with Registry() as registry:
        with anyio.fail_after(STARTUP):
            await registry.mount("everything", everything)
        record_pids(registry)
        with anyio.fail_after(RUN):
            handle = await registry.tasks.start(RESEARCH, {"topic": "never"})
            cancelled = await handle.cancel()
            assert cancelled.status == "cancelled"
            assert handle.task.status == "cancelled"
            assert (await registry.tasks.get("everything", handle.task_id)).status == "cancelled"
            with pytest.raises(UpstreamError) as failed:
                await handle.result()
    assert failed.value.server == "everything"
    assert failed.value.kind == "task"


async def test_what_runs_no_task_is_refused_before_anything_is_sent(everything: ServerSpec) -> None:
    """A tool whose taskSupport is forbidden, and a server that is not mounted."""
    async with Registry() as registry:
        with anyio.fail_after(STARTUP):
            await registry.mount("everything", everything)
        record_pids(registry)
        with pytest.raises(NotSupportedError):
            await registry.tasks.start("everything__echo", {"message": "hi"})
        with pytest.raises(ServerNotRunningError):
            await registry.tasks.get("nowhere", "some-id")
        with anyio.fail_after(RUN), pytest.raises(UpstreamError):
            await registry.tasks.get("everything", "no-such-task")
