"""The registry: mounted servers, one name table, calls routed through it.

`Registry` (``_registry``) is the public face; it holds one `Servers` (``_servers``), the
servers' lives from mount to close, whose published side (``_tables``: the name tables,
the task group) is what requests route by. How the modules work together:

- Mounting: ``_open`` (`open_registry`, a config for the length of an ``async with``),
  ``_mounting`` (many servers at once, one outcome each), ``_starting`` (a server
  published from its cached lists, started later or behind, by its start policy),
  ``_reload`` (a new config applied server by server), ``_closer`` (one server unmounted,
  whatever its state), ``_lock`` (the pins of what is mounted).
- Requests: ``requests`` (tool calls, prompts, resources and completions, each routed to
  the server that owns the name), ``_clients`` (which connection serves it: the shared
  one or its client's own), ``tasks`` (tools run as tasks, started now and fetched later).
- Around them: ``_view`` (one conversation's tools list with what its searches found),
  ``_code`` (code mode's ``run_code``, whose calls go back through `Registry.call`),
  ``_status`` (each server's status row and call statistics).
"""

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
