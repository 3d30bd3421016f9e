"""Tools run as tasks through the registry (MCP 2025-11-25 tasks): a handle per task, the
``tasks/*`` requests by server and upstream task id, and the servers' status notices.

`Registry.call` of a tool that can only run as a task needs none of this: it runs the task
and waits for its result (``run_task`` of the upstream room). `Tasks` (``registry.tasks``) is
for a caller that wants the task itself: to start it and come back for it (`TaskHandle`),
or to relay ``tasks/*`` for its own clients (``serve``), naming each task by its server
and the id that server gave it.

A task is started through the same boundary as a call: its arguments checked, the host's
interceptors, the approval gate and the secret guard before it is sent; its result, when
fetched, passes the same ``after`` hooks (the started call is kept for that, for the last
`KEPT` tasks), is cleaned, size-checked, and its resource URIs made registry URIs. A result
of a task this registry did not start (or no longer keeps) has every known secret
redacted instead. Task ids are the server's: they live as long as its process, and one
server's ``tasks/list`` holds every task this registry started on it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types
import pydantic
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.catalog import Catalog, rewrite_call
from mcpmount.errors import NotSupportedError, ServerNotRunningError, UpstreamError
from mcpmount.gates import Interception, Plan
from mcpmount.handlers import ToolCall
from mcpmount.registry._servers import Servers
from mcpmount.registry.requests import check_arguments, send_to
from mcpmount.tool import MountedTool
from mcpmount.upstream import (
    Supervisor,
    cancel_task,
    create_task,
    get_task,
    list_tasks,
    wait_result,
)

__all__ = ["KEPT", "TaskHandle", "TaskStatusListener", "Tasks"]

logger = logging.getLogger(__name__)

KEPT = 4096
"""How many started tasks keep their call, for the ``after`` hooks of their results."""

_Result = TypeVar("_Result", bound=pydantic.BaseModel)

TaskStatusListener = Callable[[str, mcp_types.Task], None]
"""Gets the namespace of a server and a status it reported of one of its tasks."""


@dataclass(frozen=True, slots=True)
class _Started:
    """What a started task's result must pass (the hooks of its call, and the call), and
    the context it was started with."""

    tool: str
    """The tool's public name: what the server's questions name as `Asker.tool`."""
    plan: Plan
    call: ToolCall | None
    context: object | None


@dataclass(eq=False)
class TaskHandle:
    """A tool running as a task on its server (`Tasks.start`).

    Cancelling a wait on it (`result`) does not cancel the task: `cancel` does.
    """

    server: str
    """The namespace of the server that runs it."""
    tool: str
    """The tool's public name."""
    task_id: str
    """The id the server gave the task."""
    task: mcp_types.Task
    """Its status as last seen: when created, then by `status`, `cancel` and the server's
    notices."""
    _tasks: Tasks

    async def status(self, *, timeout: float | None = None) -> mcp_types.GetTaskResult:
        """Ask the server for the task's status now (``tasks/get``)."""
        got = await self._tasks.get(self.server, self.task_id, timeout=timeout)
        self.task = _task_of(got)
        return got

    async def result(
        self, *, timeout: float | None = None, progress: ProgressFnT | None = None
    ) -> mcp_types.CallToolResult:
        """Wait for the task to end and return the tool's result (``tasks/result``); each
        status it reports meanwhile goes to ``progress``. See `Tasks.result`."""
        return await self._tasks.result(
            self.server, self.task_id, timeout=timeout, progress=progress, known=self.task
        )

    async def cancel(self, *, timeout: float | None = None) -> mcp_types.CancelTaskResult:
        """Cancel the task on its server (``tasks/cancel``); return it as it is then."""
        cancelled = await self._tasks.cancel(self.server, self.task_id, timeout=timeout)
        self.task = _task_of(cancelled)
        return cancelled


class Tasks:
    """The registry's tasks (``registry.tasks``); see the module docstring.

    Args:
        servers: The registry's servers (`Servers`); their status notices come here.
        catalog: The tool table.
        interception: The hooks of every call.
    """

    def __init__(self, servers: Servers, catalog: Catalog, interception: Interception) -> None:
        self._servers = servers
        self._catalog = catalog
        self._interception = interception
        self._listeners: list[TaskStatusListener] = []
        self._started: OrderedDict[tuple[str, str], _Started] = OrderedDict()

    def subscribe(self, listener: TaskStatusListener) -> Callable[[], None]:
        """Call ``listener(server, task)`` with every status a server reports of a task
        (``notifications/tasks/status``), synchronously: keep it short. One that raises
        is logged and kept. Returns the unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def notify(self, server: str, task: mcp_types.Task) -> None:
        """Tell every listener that ``server`` reported ``task`` (`Servers` calls this)."""
        for listener in list(self._listeners):
            try:
                listener(server, task)
            except Exception:
                logger.exception("a task status listener failed on %r of %r", task.task_id, server)

    async def start(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = None,
        context: object | None = None,
    ) -> TaskHandle:
        """Start the tool ``name`` (its public name) as a task; return its handle at once.

        Args:
            name: A tool whose ``execution.taskSupport`` is ``"required"`` or ``"optional"``.
            arguments: The tool's arguments.
            ttl: Milliseconds the server should keep the task; None: the server's choice.
            timeout: Seconds for the server to create it; default as for `Registry.call`.
            context: As for `Registry.call`: what the server asks while a `result` waits
                comes with it (unless that `result` is given a context of its own).

        Raises:
            UnknownToolError: No tool has that name.
            NotSupportedError: The tool or its server does not run tasks (or the server
                speaks 2026-07-28, whose tasks this does not start); nothing was sent.
            CallDeniedError, ArgumentsError: As for `Registry.call`; nothing was sent.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError:
                As for `Registry.call`.
        """
        entry = self._catalog.get(name)
        execution = entry.definition.execution
        if execution is None or execution.task_support not in ("optional", "required"):
            raise NotSupportedError(entry.server, name, "running this tool as a task")
        check_arguments(entry.server, name, arguments)
        supervisor = self._servers.supervisors[entry.server]
        plan = self._interception.plan(entry, supervisor.spec, self._servers.settings)
        call = None
        if plan.before or plan.after:
            call = await plan.run_before(arguments, context)
            arguments = call.arguments if call.arguments or arguments is not None else None

        async def send(client: Client) -> mcp_types.CreateTaskResult:
            _check_runs_tasks(client, entry)
            created = await create_task(client, entry.raw_name, arguments, ttl)
            if isinstance(created, mcp_types.CallToolResult):
                reason = "it ran the tool at once instead of as a task; its result is lost"
                raise UpstreamError(entry.server, name, mcp_types.INTERNAL_ERROR, reason)
            return created

        servers, interception = self._servers, self._interception
        created = await send_to(servers, interception, entry.server, "tool", name, timeout, send)
        task = created.task
        self._started[entry.server, task.task_id] = _Started(name, plan, call, context)
        while len(self._started) > KEPT:
            self._started.popitem(last=False)
        return TaskHandle(entry.server, name, task.task_id, task, self)

    async def get(
        self, server: str, task_id: str, *, timeout: float | None = None
    ) -> mcp_types.GetTaskResult:
        """``tasks/get`` of ``server``'s task ``task_id``: its status now.

        Raises:
            ServerNotRunningError: No server of that namespace is mounted, or it is down.
            UpstreamError: The server refused it (an unknown id, for one).
            CallTimeoutError, ServerCrashedError: As for `Registry.call`.
        """
        self._supervisor(server, task_id)

        async def send(client: Client) -> mcp_types.GetTaskResult:
            return await get_task(client, task_id)

        return await self._send(server, task_id, timeout, send)

    async def result(
        self,
        server: str,
        task_id: str,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
        context: object | None = None,
        known: mcp_types.Task | None = None,
    ) -> mcp_types.CallToolResult:
        """``tasks/result`` of ``server``'s task ``task_id``: wait until it ends, and
        return the tool's result, as `Registry.call` would have (see the module
        docstring). While it waits, the task's questions (elicitation) reach the
        handlers with ``context`` (default: the one it was started with) and the tool's
        public name as `Asker.tool` (the task id for a task started elsewhere), and each
        new status goes to ``progress``.

        Raises:
            UpstreamError: The task failed or was cancelled (it has no result), or the
                server refused the request (an unknown id, for one).
            ServerNotRunningError, CallTimeoutError, ServerCrashedError: As for `get`.
            ResultTooLargeError, ResultWithheldError: As for `Registry.call`.
        """
        supervisor = self._supervisor(server, task_id)
        started = self._started.get((server, task_id))
        name = task_id
        if started is not None:
            name, context = started.tool, context if context is not None else started.context

        async def send(client: Client) -> mcp_types.CallToolResult:
            watch = supervisor.connection.tasks
            return await wait_result(client, watch, task_id, progress, known)

        result = await self._send(server, name, timeout, send, asks=True, context=context)
        result = rewrite_call(server, result, prefix=supervisor.spec.prefix)
        if started is None:
            return self._interception.secrets.redact_model(result)
        if started.call is None:
            return result
        return await started.plan.run_after(started.call, result)

    async def cancel(
        self, server: str, task_id: str, *, timeout: float | None = None
    ) -> mcp_types.CancelTaskResult:
        """``tasks/cancel`` of ``server``'s task ``task_id``; the task as it is then.

        Raises:
            What `get` raises.
        """
        self._supervisor(server, task_id)

        async def send(client: Client) -> mcp_types.CancelTaskResult:
            return await cancel_task(client, task_id)

        return await self._send(server, task_id, timeout, send)

    async def list(
        self, server: str, cursor: str | None = None, *, timeout: float | None = None
    ) -> mcp_types.ListTasksResult:
        """``tasks/list`` of ``server``: one page of its tasks, every task this registry
        started on it (whoever asked for them).

        Raises:
            What `get` raises.
        """
        self._supervisor(server, "tasks/list")

        async def send(client: Client) -> mcp_types.ListTasksResult:
            return await list_tasks(client, cursor)

        return await self._send(server, "tasks/list", timeout, send)

    def _supervisor(self, server: str, name: str) -> Supervisor:
        supervisor = self._servers.supervisors.get(server)
        if supervisor is None:
            reason = "no server of that name is mounted"
            raise ServerNotRunningError(server, name, reason, kind="task")
        return supervisor

    async def _send(
        self,
        server: str,
        task_id: str,
        timeout: float | None,
        send: Callable[[Client], Awaitable[_Result]],
        *,
        asks: bool = False,
        context: object | None = None,
    ) -> _Result:
        """`send_to` ``server``, naming the task by its id."""
        servers, interception = self._servers, self._interception
        return await send_to(
            servers, interception, server, "task", task_id, timeout, send, asks, context
        )


def _check_runs_tasks(client: Client, entry: MountedTool) -> None:
    """Raise `NotSupportedError` unless ``client``'s server runs tool calls as tasks here
    (2025-11-25 capabilities)."""
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        what = "tasks started by mcpmount on a 2026-07-28 connection (call it instead)"
        raise NotSupportedError(entry.server, entry.name, what)
    capability = client.server_capabilities.tasks
    requests = capability.requests if capability is not None else None
    if requests is None or requests.tools is None or requests.tools.call is None:
        raise NotSupportedError(entry.server, entry.name, "tool calls as tasks")


def _task_of(answer: mcp_types.Result) -> mcp_types.Task:
    """The `Task` an answer that is one (``tasks/get``, ``tasks/cancel``) holds."""
    return mcp_types.Task.model_validate(answer.model_dump(by_alias=True), by_name=False)
