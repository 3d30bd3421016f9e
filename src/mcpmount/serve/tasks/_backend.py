"""What the task relay needs of the registry: start a task, and get, wait for, cancel one.

`TaskBackend` is the seam between the downstream side (`TaskFront`) and the servers:
everything is by the server's namespace and the *upstream* task id, which never leaves
serve. `DirectTasks` is the one serve uses: it sends the task requests to the upstream
server of the tool, over the connection the registry holds, marking each wait for a result
as a call in flight so that what the server asks meanwhile (an elicitation of the task)
reaches the client of that wait (`mcpmount.upstream` `Asking`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import mcp_types
import pydantic
from mcp import Client, MCPError

from mcpmount.errors import ServerNotRunningError, UpstreamError
from mcpmount.registry import Registry
from mcpmount.serve.tasks._records import TaskRecord

__all__ = [
    "DirectTasks",
    "Started",
    "StatusListener",
    "TaskBackend",
    "TaskSupport",
    "task_support",
]

TaskSupport = Literal["forbidden", "optional", "required"]

StatusListener = Callable[[str, mcp_types.Task], None]
"""Told (synchronously) each status a server says one of its tasks has: its namespace,
and the task under the server's own id."""


def task_support(tool: mcp_types.Tool) -> TaskSupport:
    """How ``tool`` may be run as a task (absent means ``"forbidden"``)."""
    execution = tool.execution
    if execution is None or execution.task_support is None:
        return "forbidden"
    return execution.task_support


@dataclass(frozen=True, slots=True)
class Started:
    """A task a server created: its namespace and the task as the server told it."""

    server: str
    task: mcp_types.Task


class TaskBackend(Protocol):
    """Tasks on the mounted servers, by namespace and upstream id."""

    async def start(
        self, name: str, arguments: dict[str, Any] | None, ttl: int | None, context: object
    ) -> Started:
        """Call the tool ``name`` (a public name) as a task; ``context`` as `Registry.call`'s."""
        ...

    async def get(self, server: str, task_id: str) -> mcp_types.Task:
        """The task's state now."""
        ...

    async def result(self, record: TaskRecord, context: object) -> mcp_types.CallToolResult:
        """Wait for the task's result, at most until its id expires (what the server asks
        meanwhile comes with ``context``).

        Raises:
            UpstreamError: The task failed with that JSON-RPC error, or the id is unknown.
        """
        ...

    async def cancel(self, server: str, task_id: str) -> mcp_types.Task:
        """Ask the server to cancel the task; its state after."""
        ...

    def subscribe_status(self, listener: StatusListener) -> Callable[[], None]:
        """Tell ``listener`` each task status a server sends; returns the unsubscriber."""
        ...


class DirectTasks:
    """A `TaskBackend` sending the 2025-11-25 task requests to each upstream server.

    Args:
        registry: The served registry; a tool's server is its.
    """

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def _connection(self, server: str, tool: str) -> tuple[Client, Any]:
        supervisors = self._registry._servers.supervisors  # pyright: ignore[reportPrivateUsage]
        supervisor = supervisors.get(server)
        connection = supervisor.connection if supervisor is not None else None
        client = connection.client if connection is not None else None
        if connection is None or client is None:
            raise ServerNotRunningError(server, tool, "it is not running")
        return client, connection

    async def _send(
        self, server: str, tool: str, method: str, params: dict[str, Any], context: object = None
    ) -> dict[str, Any]:
        client, connection = self._connection(server, tool)
        session = client.session
        try:
            with connection.asking.calling(tool, context):
                dispatcher = session._dispatcher  # pyright: ignore[reportPrivateUsage]
                return await dispatcher.send_raw_request(method, params, {})
        except MCPError as exc:
            raise UpstreamError(server, tool, exc.code, exc.message) from None

    async def start(
        self, name: str, arguments: dict[str, Any] | None, ttl: int | None, context: object
    ) -> Started:
        entry = self._registry.get(name)
        task: dict[str, Any] = {} if ttl is None else {"ttl": ttl}
        params: dict[str, Any] = {"name": entry.raw_name, "task": task}
        if arguments is not None:
            params["arguments"] = arguments
        raw = await self._send(entry.server, name, "tools/call", params, context)
        return Started(entry.server, _task(raw.get("task"), entry.server, name))

    async def get(self, server: str, task_id: str) -> mcp_types.Task:
        raw = await self._send(server, "tasks/get", "tasks/get", {"taskId": task_id})
        return _task(raw, server, "tasks/get")

    async def result(self, record: TaskRecord, context: object) -> mcp_types.CallToolResult:
        server, tool = record.server, record.tool
        params = {"taskId": record.upstream_id}
        raw = await self._send(server, tool, "tasks/result", params, context)
        try:
            return mcp_types.CallToolResult.model_validate(raw, by_name=False)
        except pydantic.ValidationError:
            message = "its task result is not a tool result"
            raise UpstreamError(server, tool, mcp_types.INTERNAL_ERROR, message) from None

    def subscribe_status(self, listener: StatusListener) -> Callable[[], None]:
        return lambda: None  # the connection's notices are not at hand here

    async def cancel(self, server: str, task_id: str) -> mcp_types.Task:
        raw = await self._send(server, "tasks/cancel", "tasks/cancel", {"taskId": task_id})
        return _task(raw, server, "tasks/cancel")


def _task(raw: object, server: str, tool: str) -> mcp_types.Task:
    try:
        return mcp_types.Task.model_validate(cast("dict[str, Any]", raw), by_name=False)
    except pydantic.ValidationError:
        message = "its answer is not a task"
        raise UpstreamError(server, tool, mcp_types.INTERNAL_ERROR, message) from None
