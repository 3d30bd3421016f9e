"""A 2026-era task's wait for its result, and the questions its server asks meanwhile.

A 2026-07-28 client never waits on a task: it polls ``tasks/get``, and answers what the
task asks with ``tasks/update``. A server that speaks 2025-11-25 asks its questions (an
elicitation) only while someone waits on the task's ``tasks/result``. So for each task a
2026-era client started, and that client may be asked something, serve waits on the
result itself (`Driver.run`), as that client: what the server asks is held as the task's
``inputRequests`` (keys ``q1``, ``q2``, ... never reused), shown by ``tasks/get`` with the
status ``input_required``, and answered by ``tasks/update``. A question waits for its
answer at most the relay's round timeout, then is answered with an error.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

import anyio
import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext

from mcpmount.errors import RegistryError, UpstreamError
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
        self.finished = False
        self.outcome: mcp_types.CallToolResult | MCPError | None = None
        """The result, or the JSON-RPC error the task failed with; None if it could not be
        had (the server went away: ``tasks/get`` asks the server again)."""
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
        """Wait for the result (until cancelled); keep it as `outcome`."""
        record = self.record
        try:
            with self.scope:
                self.outcome = await backend.result(
                    record.server, record.tool, record.upstream_id, self
                )
        except UpstreamError as exc:
            self.outcome = MCPError(exc.code, exc.upstream_message)
        except RegistryError as exc:
            logger.info("task of %r: its result could not be had: %s", record.tool, exc)
        finally:
            self.finished = True
            for _, answered in self._pending.values():
                answered.set()
