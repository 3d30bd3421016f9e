"""Tasks through ``serve``: task-augmented calls and the task requests, relayed.

`TaskFront` (``_front``) answers a client's task requests in the era it speaks (the
2025-11-25 core form, or the 2026-07-28 ``io.modelcontextprotocol/tasks`` extension)
from the mounted servers' tasks (`TaskBackend`, ``_backend``), under downstream ids of
its own bound to the principal that started each task (`TaskIds`, ``_records``; kept
by the replica that started it: tasks are sticky, docs/serve.md). The task's wire
forms and errors are ``_wire``'s; the 2026-era wait on a result, and the questions a task
asks meanwhile, ``_drivers``'.
"""

from mcpmount.serve.tasks._backend import RegistryTasks, Started, TaskBackend, task_support
from mcpmount.serve.tasks._front import MAX_DRIVEN, MAX_LISTED, TaskFront
from mcpmount.serve.tasks._records import (
    MAX_TASKS,
    InMemoryTaskIds,
    TaskIds,
    TaskRecord,
    expiry,
    new_task_id,
)
from mcpmount.serve.tasks._wire import TASKS_EXTENSION, server_capability

__all__ = [
    "MAX_DRIVEN",
    "MAX_LISTED",
    "MAX_TASKS",
    "TASKS_EXTENSION",
    "InMemoryTaskIds",
    "RegistryTasks",
    "Started",
    "TaskBackend",
    "TaskFront",
    "TaskIds",
    "TaskRecord",
    "expiry",
    "new_task_id",
    "server_capability",
    "task_support",
]
