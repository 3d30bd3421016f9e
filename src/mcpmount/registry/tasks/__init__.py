"""Tools run as tasks through the registry (``registry.tasks``): start one and come back for it.

``_tasks``: a handle per task, the ``tasks/*`` requests by server and upstream task id, and
the servers' status notices.
"""

from mcpmount.registry.tasks._tasks import KEPT, TaskHandle, Tasks, TaskStatusListener

__all__ = ["KEPT", "TaskHandle", "TaskStatusListener", "Tasks"]
