"""A 2026-era task's wait for its result, and the questions its server asks meanwhile.

A 2026-07-28 client never waits on a task: it polls ``tasks/get``, and answers what the
task asks with ``tasks/update``. A server that speaks 2025-11-25 asks its questions (an
elicitation) only while someone waits on the task's ``tasks/result``. So for each task a
2026-era client started, serve waits on the result itself (`Driver.run`), as that client:
what the server asks is held as the task's ``inputRequests`` (keys ``q1``, ``q2``, ...
never reused), shown by ``tasks/get`` with the status ``input_required``, and answered by
``tasks/update``; a question the client cannot answer (it declared no elicitation) gets
the relay's safe answer at once. A question waits for its answer at most the relay's round
timeout, then is answered with an error.
"""

from __future__ import annotations

import itertools
import logging
import time
from typing import Any

import anyio
import mcp_types
from mcp.server import ServerRequestContext

from mcpmount.errors import RegistryError
from mcpmount.serve.relay import Answer, Downstream, error
from mcpmount.serve.tasks._backend import TaskBackend
from mcpmount.serve.tasks._records import TaskRecord
from mcpmount.serve.tasks._wire import RELATED_TASK

__all__ = ["Driver", "TaskAsking"]

logger = logging.getLogger(__name__)


class TaskAsking(Downstream):
    """The client waiting on a task (its handshake-era ``tasks/result``): what the task's
    server asks goes to it tied to the downstream id, never the server's own.

    Args:
        ctx: The request that waits.
        timeout: Seconds a question waits for the client's answer.
        record: The task.
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float, record: TaskRecord):
        super().__init__(ctx, timeout)
        self.record = record

    async def ask(self, request: mcp_types.InputRequest) -> Answer:
        return await super().ask(relabeled(request, self.record.task_id))


def relabeled(request: mcp_types.InputRequest, task_id: str) -> mcp_types.InputRequest:
    """``request`` with its ``related-task`` (the server's id) naming ``task_id`` instead."""
    params = request.params
    meta = dict(params.meta or {}) if params is not None else {}
    if params is None or RELATED_TASK not in meta:
        return request
    meta[RELATED_TASK] = {"taskId": task_id}
    return request.model_copy(update={"params": params.model_copy(update={"meta": meta})})


class Driver(TaskAsking):
    """The wait on one task's result, asking as the 2026-era client that started it.

    Args:
        ctx: The request that started the task (its client's capabilities).
        timeout: Seconds a question waits for the client's answer.
        record: The task.
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float, record: TaskRecord):
        super().__init__(ctx, timeout, record)
        self.scope = anyio.CancelScope()
        """Around the wait: `tasks/cancel` cancels it."""
        self._keys = itertools.count(1)
        self._pending: dict[str, tuple[mcp_types.InputRequest, anyio.Event]] = {}
        self._answers: dict[str, mcp_types.InputResponse] = {}

    def can_ask(self) -> bool:
        return True

    async def ask(self, request: mcp_types.InputRequest) -> Answer:
        request = relabeled(request, self.record.task_id)
        key = f"q{next(self._keys)}"
        answered = anyio.Event()
        self._pending[key] = (request, answered)
        try:
            with anyio.move_on_after(self.timeout):
                await answered.wait()
        finally:
            del self._pending[key]
        answer = self._answers.pop(key, None)
        if answer is None:
            return error(f"the client did not answer within {self.timeout:g} s")
        return answer

    def questions(self) -> dict[str, mcp_types.InputRequest]:
        """What the task asks its client now, by key."""
        return {key: request for key, (request, _) in self._pending.items()}

    def answer(self, responses: dict[str, mcp_types.InputResponse]) -> None:
        """Take the client's answers; a key that is not asked now is ignored (the spec's)."""
        for key, response in responses.items():
            pending = self._pending.get(key)
            if pending is not None and key not in self._answers:
                self._answers[key] = response
                pending[1].set()

    async def run(self, backend: TaskBackend) -> None:
        """Wait for the result (until cancelled, or the id expires): what the server asks
        meanwhile comes here. The result itself stays the server's: ``tasks/get`` asks
        it for a task that is done."""
        record = self.record
        self.scope.deadline = anyio.current_time() + max(0.0, record.expires - time.time())
        try:
            with self.scope:
                await backend.result(record, self)
        except RegistryError as exc:  # a failed task (UpstreamError) too: tasks/get tells it
            logger.debug("task of %r ended without a result: %s", record.tool, exc)
