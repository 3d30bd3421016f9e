"""What the task relay needs of the registry: start a task, and get, wait for, cancel one.

`TaskBackend` is the seam between the downstream side (`TaskFront`) and the servers:
everything is by the server's namespace and the *upstream* task id, which never leaves
serve. `RegistryTasks` is the one serve uses (`Registry.tasks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types

from mcpmount.registry import Registry, TaskStatusListener
from mcpmount.serve.tasks._records import TaskRecord

__all__ = [
    "RegistryTasks",
    "Started",
    "TaskBackend",
    "TaskSupport",
    "task_support",
]

TaskSupport = Literal["forbidden", "optional", "required"]


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

    def subscribe_status(self, listener: TaskStatusListener) -> Callable[[], None]:
        """Tell ``listener`` each task status a server sends; returns the unsubscriber."""
        ...


class RegistryTasks:
    """A `TaskBackend` on the registry's tasks (`Registry.tasks`): the 2025-11-25 task
    requests, sent to the tool's server over the connection the registry holds; a wait on
    a result marks a call in flight, so what the server asks meanwhile reaches the
    relay's handlers with the wait's ``context``.

    Args:
        registry: The served registry.
    """

    def __init__(self, registry: Registry) -> None:
        self._tasks = registry.tasks

    async def start(
        self, name: str, arguments: dict[str, Any] | None, ttl: int | None, context: object
    ) -> Started:
        handle = await self._tasks.start(name, arguments, ttl=ttl, context=context)
        return Started(handle.server, handle.task)

    async def get(self, server: str, task_id: str) -> mcp_types.Task:
        return await self._tasks.get(server, task_id)

    async def result(self, record: TaskRecord, context: object) -> mcp_types.CallToolResult:
        left = max(record.expires - time.time(), 1.0)
        return await self._tasks.result(
            record.server, record.upstream_id, timeout=left, context=context
        )

    async def cancel(self, server: str, task_id: str) -> mcp_types.Task:
        return await self._tasks.cancel(server, task_id)

    def subscribe_status(self, listener: TaskStatusListener) -> Callable[[], None]:
        return self._tasks.subscribe(listener)
