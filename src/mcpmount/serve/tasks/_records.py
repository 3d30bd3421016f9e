"""Which downstream task id stands for which upstream task, and whose it is.

A task that ``serve`` relays gets an id of its own, handed to the client that started it:
random (`new_task_id`), so it says nothing of the upstream server or of the upstream's
id, and two servers' ids can never collide. `TaskRecord` maps it to the server, the
upstream id and the principal that started it; only that principal may read it, and to
any other it does not exist.

`TaskIds` is the seam: `InMemoryTaskIds` (the default, and the only store) keeps one
process's tasks, bounded, each until its time to live ends. Replicas do not share them: a
task is sticky to the replica that started it (docs/serve.md, Tasks).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

__all__ = [
    "DEFAULT_TTL_MS",
    "MAX_TASKS",
    "InMemoryTaskIds",
    "TaskIds",
    "TaskRecord",
    "expiry",
    "new_task_id",
]

MAX_TASKS: Final = 10_000
"""How many tasks the in-memory store remembers, the oldest first out."""

DEFAULT_TTL_MS: Final = 24 * 3600 * 1000
"""How long a task whose server keeps it forever (``ttl: null``) is remembered here."""

_PREFIX: Final = "mmt-"


def new_task_id() -> str:
    """A fresh downstream task id: 192 random bits (unguessable, as the spec asks)."""
    return _PREFIX + secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One relayed task: what its downstream id stands for."""

    task_id: str
    """The id the client knows (`new_task_id`)."""

    server: str
    """The namespace of the server that runs it."""

    upstream_id: str
    """The server's own id of the task; never sent downstream."""

    tool: str
    """The public name of the tool it runs (errors name it)."""

    owner: str
    """The identity of the principal that started it (``""``: no token); only it sees it."""

    expires: float
    """Wall-clock time (``time.time()``) after which the id is forgotten."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        return cls(
            task_id=str(data["task_id"]),
            server=str(data["server"]),
            upstream_id=str(data["upstream_id"]),
            tool=str(data["tool"]),
            owner=str(data["owner"]),
            expires=float(data["expires"]),
        )


def expiry(ttl_ms: int | None) -> float:
    """When a task kept ``ttl_ms`` milliseconds by its server is forgotten here."""
    kept = DEFAULT_TTL_MS if ttl_ms is None else min(ttl_ms, DEFAULT_TTL_MS)
    return time.time() + kept / 1000


class TaskIds(Protocol):
    """The downstream task ids of a served registry and what each stands for."""

    async def put(self, record: TaskRecord) -> None:
        """Remember ``record`` until it expires; it must be readable once this returns."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record of ``task_id``; None for an unknown or expired id."""
        ...

    async def owned_by(self, owner: str) -> list[TaskRecord]:
        """The live records ``owner`` started, the newest last."""
        ...


class InMemoryTaskIds:
    """A `TaskIds` in this process's memory, at most ``max_tasks``, the oldest first out."""

    def __init__(self, max_tasks: int = MAX_TASKS) -> None:
        if max_tasks < 1:
            raise ValueError(f"max_tasks must be at least 1, not {max_tasks!r}")
        self._max = max_tasks
        self._records: OrderedDict[str, TaskRecord] = OrderedDict()

    def __repr__(self) -> str:
        return f"<InMemoryTaskIds {len(self._records)}/{self._max} tasks>"

    async def put(self, record: TaskRecord) -> None:
        self._records[record.task_id] = record
        while len(self._records) > self._max:
            self._records.popitem(last=False)

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expires < time.time():
            del self._records[task_id]
            return None
        return record

    async def owned_by(self, owner: str) -> list[TaskRecord]:
        now = time.time()
        return [r for r in self._records.values() if r.owner == owner and r.expires >= now]
