"""Tools run as tasks (MCP 2025-11-25): the task-augmented call and the ``tasks/*`` requests.

A tool whose ``execution.taskSupport`` is ``"required"`` cannot be called directly: the
client sends ``tools/call`` with ``task: {ttl}``, the server answers with a task handle
(``CreateTaskResult``) at once, and the result comes later from ``tasks/result``, which
blocks until the task ends. What the task asks meanwhile (an elicitation, in the
``input_required`` status) reaches the client while that ``tasks/result`` waits, so
waiting on it is what lets the task finish. ``notifications/tasks/status`` reports each
change of status; ``tasks/get`` polls it (``pollInterval``) where a server sends none.

The SDK (2.3) has the types but no client side for tasks, and it checks every
``tools/call`` answer against ``CallToolResult``, which a task handle is not: so the
task-augmented call is sent one layer below that check (`create_task`). The status
notice is none of the core protocol's notifications at any version, and reaches the
client only through a notification binding (`TaskStatusWatch.extension`): an extension,
which the SDK advertises in both eras, so `Connection` binds it only for a server set to
``protocol = "legacy"``; elsewhere a task's status comes from ``tasks/get`` alone.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.shared.dispatcher import CallOptions, ProgressFnT

__all__ = [
    "TASKS_EXTENSION",
    "TaskStatusWatch",
    "cancel_task",
    "create_task",
    "get_task",
    "list_tasks",
    "run_task",
    "task_result",
    "wait_result",
]

logger = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (2026-07-28), under which the status notice is bound."""

CANCEL_BOUND = 5.0
"""Seconds a ``tasks/cancel`` may take when a caller gives up on its task."""

_DEFAULT_POLL = 1.0
"""Seconds between two ``tasks/get`` when the server suggests no ``pollInterval``."""

TaskStatusCallback = Callable[[mcp_types.Task], None]
"""Told (synchronously) each status one server says of its tasks, under its own id; the
registry adds the namespace (`mcpmount.registry.TaskStatusListener`)."""


class _StatusBinding(ClientExtension):
    """Binds ``notifications/tasks/status``; advertises nothing it does not do (no claims)."""

    identifier = TASKS_EXTENSION

    def __init__(self, watch: TaskStatusWatch) -> None:
        self._watch = watch

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=mcp_types.TaskStatusNotificationParams,
                handler=self._watch.notified,
            )
        ]


class TaskStatusWatch:
    """One connection's task status notices: to whoever waits on that task, and to
    ``on_status`` (the registry's listeners) for every task.

    Args:
        on_status: Called with every status the server reports, of any task.
    """

    def __init__(self, on_status: TaskStatusCallback | None = None) -> None:
        self.on_status = on_status
        self._watchers: dict[str, list[TaskStatusCallback]] = {}

    def extension(self) -> ClientExtension:
        """The SDK client extension that delivers the notices here."""
        return _StatusBinding(self)

    async def notified(self, params: mcp_types.TaskStatusNotificationParams) -> None:
        """Deliver one notice (the SDK calls this, one notice at a time)."""
        task = mcp_types.Task.model_validate(params.model_dump(by_alias=True), by_name=False)
        self.deliver(task)

    def deliver(self, task: mcp_types.Task) -> None:
        """Tell the watchers of ``task`` and ``on_status`` its status; never raises."""
        for listener in [*self._watchers.get(task.task_id, ()), self.on_status]:
            if listener is None:
                continue
            try:
                listener(task)
            except Exception:
                logger.exception("a task status listener failed on task %r", task.task_id)

    @contextmanager
    def watching(self, task_id: str, listener: TaskStatusCallback) -> Generator[None]:
        """Give ``listener`` the notices of ``task_id`` while in the block."""
        self._watchers.setdefault(task_id, []).append(listener)
        try:
            yield
        finally:
            watchers = self._watchers[task_id]
            watchers.remove(listener)
            if not watchers:
                del self._watchers[task_id]


async def create_task(
    client: Client,
    raw_name: str,
    arguments: Mapping[str, Any] | None,
    ttl: int | None,
    meta: mcp_types.RequestParamsMeta | None = None,
) -> mcp_types.CreateTaskResult | mcp_types.CallToolResult:
    """Send ``tools/call`` of ``raw_name`` as a task; return the server's task handle, or
    its result when it ran the tool at once (a server that does not do tasks ignores
    ``task``, as the protocol asks of it).

    Raises:
        MCPError: The server answered with an error (or the connection closed).
        pydantic.ValidationError: Its answer is no task handle.
    """
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(
            name=raw_name,
            arguments=dict(arguments) if arguments is not None else None,
            task=mcp_types.TaskMetadata(ttl=ttl),
            _meta=meta,
        )
    )
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    params: dict[str, Any] = data["params"]
    params.setdefault("task", {})  # an empty ``task`` still asks for one
    session = client.session
    opts: CallOptions = {}
    # Below `ClientSession.send_request`, which would check the answer as a
    # ``CallToolResult`` (see the module docstring); the same stamp and dispatcher.
    session._stamp(data, opts)  # pyright: ignore[reportPrivateUsage]
    dispatcher = session._dispatcher  # pyright: ignore[reportPrivateUsage]
    raw = await dispatcher.send_raw_request("tools/call", params, opts)
    if "task" not in raw:
        return mcp_types.CallToolResult.model_validate(raw, by_name=False)
    return mcp_types.CreateTaskResult.model_validate(raw, by_name=False)


async def get_task(client: Client, task_id: str) -> mcp_types.GetTaskResult:
    """``tasks/get``: the task's status now."""
    request = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, mcp_types.GetTaskResult)


async def task_result(client: Client, task_id: str) -> mcp_types.CallToolResult:
    """``tasks/result``: wait until the task ends; return the tool's result."""
    request = mcp_types.GetTaskPayloadRequest(
        params=mcp_types.GetTaskPayloadRequestParams(task_id=task_id)
    )
    return await client.session.send_request(request, mcp_types.CallToolResult)


async def cancel_task(client: Client, task_id: str) -> mcp_types.CancelTaskResult:
    """``tasks/cancel``: the task as it is once cancelled."""
    request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, mcp_types.CancelTaskResult)


async def list_tasks(client: Client, cursor: str | None) -> mcp_types.ListTasksResult:
    """``tasks/list``: one page of the session's tasks."""
    params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
    request = mcp_types.ListTasksRequest(params=params)
    return await client.session.send_request(request, mcp_types.ListTasksResult)


async def run_task(
    client: Client,
    watch: TaskStatusWatch,
    raw_name: str,
    arguments: Mapping[str, Any] | None,
    progress: ProgressFnT | None,
    meta: mcp_types.RequestParamsMeta | None = None,
) -> mcp_types.CallToolResult:
    """Run ``raw_name`` as a task and wait for its result (`Connection.call` of a tool that
    can only run as a task).

    Each new status (its message, else its name) goes to ``progress``, as the server
    reports it or, between its notices, as ``tasks/get`` finds it every ``pollInterval``.
    The caller's cancel scope bounds the wait; if it is cancelled (a timeout, a caller
    that gave up), the task is cancelled upstream too (``tasks/cancel``, shielded and
    bounded) before the cancellation goes on.

    Raises:
        MCPError: The server answered an error: for the call, or for ``tasks/result`` (a
            task that failed or was cancelled has no result).
    """
    created = await create_task(client, raw_name, arguments, None, meta)
    if isinstance(created, mcp_types.CallToolResult):
        return created
    task = created.task
    watch.deliver(task)
    try:
        return await wait_result(client, watch, task.task_id, progress, task)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_BOUND):
            try:
                await cancel_task(client, task.task_id)
            except Exception as exc:  # the caller's cancellation is what matters
                logger.info("task %r was not cancelled upstream: %r", task.task_id, exc)
        raise


async def wait_result(
    client: Client,
    watch: TaskStatusWatch,
    task_id: str,
    progress: ProgressFnT | None,
    known: mcp_types.Task | None = None,
) -> mcp_types.CallToolResult:
    """`task_result`, reporting each new status of the task to ``progress`` while it waits
    (``known``: its status as last seen, reported first). The reporter never raises: a
    failed poll or callback costs a report, not the result.

    Raises:
        MCPError: What `task_result` raises.
    """
    if progress is None:
        return await task_result(client, task_id)
    send, receive = anyio.create_memory_object_stream[mcp_types.Task](math.inf)

    async def report(latest: mcp_types.Task | None) -> None:
        shown: tuple[str, str | None] | None = None
        count = 0
        while True:
            if latest is not None and (latest.status, latest.status_message) != shown:
                shown, count = (latest.status, latest.status_message), count + 1
                try:
                    await progress(float(count), None, latest.status_message or latest.status)
                except Exception:
                    logger.exception("a progress callback failed on task %r", task_id)
            poll = latest.poll_interval if latest is not None else None
            with anyio.move_on_after((poll or 0) / 1000 or _DEFAULT_POLL):
                latest = await receive.receive()
                continue
            try:
                got = await get_task(client, task_id)
            except Exception as exc:
                logger.debug("tasks/get of %r failed: %r", task_id, exc)
                continue
            latest = mcp_types.Task.model_validate(got.model_dump(by_alias=True), by_name=False)

    error: Exception | None = None
    result: mcp_types.CallToolResult | None = None
    with send, receive, watch.watching(task_id, send.send_nowait):
        async with anyio.create_task_group() as group:
            group.start_soon(report, known)
            try:
                result = await task_result(client, task_id)
            except Exception as exc:  # raised below, not as a group of one
                error = exc
            group.cancel_scope.cancel()
    if error is not None:
        raise error
    assert result is not None
    return result
