"""The registry: mounted servers, one name table, calls routed through it."""

from mcpmount.catalog import RegistryChange
from mcpmount.gates import needs_approval
from mcpmount.observers import CallEvent, Observers, SearchEvent
from mcpmount.registry._clients import Clients, ConnectionAuth
from mcpmount.registry._closer import Closer
from mcpmount.registry._code import META_TOOLS, code_names, code_tools
from mcpmount.registry._mounting import required_as_written
from mcpmount.registry._open import open_registry, read_pins
from mcpmount.registry._registry import Registry
from mcpmount.registry._reload import ReloadResult
from mcpmount.registry._status import MountOutcome, ServerStatus, status_json
from mcpmount.registry._view import View
from mcpmount.registry.tasks import TaskHandle, Tasks, TaskStatusListener

__all__ = [
    "META_TOOLS",
    "CallEvent",
    "Clients",
    "Closer",
    "ConnectionAuth",
    "MountOutcome",
    "Observers",
    "Registry",
    "RegistryChange",
    "ReloadResult",
    "SearchEvent",
    "ServerStatus",
    "TaskHandle",
    "TaskStatusListener",
    "Tasks",
    "View",
    "code_names",
    "code_tools",
    "needs_approval",
    "open_registry",
    "read_pins",
    "required_as_written",
    "status_json",
]
