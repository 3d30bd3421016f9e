"""A task as each era's client reads it, and the errors every task request may get.

The 2025-11-25 form (tasks in the core protocol): ``tools/call`` with ``task`` answers
``{"task": Task}``, a `Task` has ``ttl`` and ``pollInterval``. The 2026-07-28 form (the
``io.modelcontextprotocol/tasks`` extension, SEP-2663): ``tools/call`` answers the task
itself with ``resultType: "task"``, a task has ``ttlMs`` and ``pollIntervalMs``, and
``tasks/get`` inlines the final ``result`` (or ``error``) and the ``inputRequests`` of a
task waiting for its client.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = [
    "MISSING_CAPABILITY",
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "declares_tasks",
    "legacy_task",
    "missing_capability",
    "modern",
    "modern_task",
    "server_capability",
    "unknown_task",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The 2026-era extension's identifier."""

RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key that ties a message to its task."""

MISSING_CAPABILITY: Final = -32021
"""The 2026-07-28 error code of a request that needs a capability the client did not declare."""


def modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the request speaks the 2026-07-28 era."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether a 2026-era request declared the tasks extension in its capabilities."""
    capabilities = ctx.session.client_capabilities
    extensions = capabilities.extensions if capabilities is not None else None
    return extensions is not None and TASKS_EXTENSION in extensions


def legacy_task(task: mcp_types.Task, task_id: str) -> dict[str, Any]:
    """``task`` in the 2025-11-25 form, under the downstream id."""
    wire = task.model_dump(by_alias=True, mode="json", exclude_none=True)
    wire["taskId"] = task_id
    wire["ttl"] = task.ttl  # null (unlimited) is a value here
    return wire


def modern_task(task: mcp_types.Task, task_id: str) -> dict[str, Any]:
    """``task`` in the 2026-07-28 extension's form, under the downstream id."""
    wire: dict[str, Any] = {
        "taskId": task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttlMs": task.ttl,
    }
    if task.status_message is not None:
        wire["statusMessage"] = task.status_message
    if task.poll_interval is not None:
        wire["pollIntervalMs"] = task.poll_interval
    return wire


def unknown_task(method: str) -> MCPError:
    """What every task request naming an id that is not the caller's gets: an unknown id,
    another principal's and an expired one alike."""
    return MCPError(
        mcp_types.INVALID_PARAMS,
        f"{method}: no task has this id (it may have expired); start the tool again",
    )


def missing_capability(method: str) -> MCPError:
    """The 2026-era answer to a task request from a client that did not declare tasks."""
    return MCPError(
        MISSING_CAPABILITY,
        f"{method} needs the {TASKS_EXTENSION} extension: declare it in the request's "
        "client capabilities",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def server_capability() -> mcp_types.ServerTasksCapability:
    """What serve advertises in the 2025-11-25 handshake: task-augmented ``tools/call``,
    ``tasks/list`` and ``tasks/cancel`` (the 2026 era has the extension instead)."""
    tools = mcp_types.TasksToolsCapability(call=mcp_types.TasksCallCapability())
    return mcp_types.ServerTasksCapability(
        list=mcp_types.TasksListCapability(),
        cancel=mcp_types.TasksCancelCapability(),
        requests=mcp_types.ServerTasksRequestsCapability(tools=tools),
    )
