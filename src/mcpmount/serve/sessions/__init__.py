"""Sessions: who each downstream session is, and what it is told without asking.

- `Sessions` (``_sessions``): the live downstream sessions, each with the principal that
  opened it (`mcpmount.serve.access`), and the conversation a sessionless request names
  (`CONVERSATION_HEADER`), scoped to its principal.
- `Changes` (``_changes``): a registry change as ``list_changed`` to the sessions that may see
  its servers, and as `ListChanged` events (`ToolsChanged`, `PromptsChanged`,
  `ResourcesChanged`) on the ``subscriptions/listen`` bus.
- `Logs` (``_logs``): ``logging/setLevel`` per session, and upstream log messages to the
  sessions that may see their server.
- `Subscriptions` (``_subscriptions``): resource subscriptions and updates, and
  `VisibleEvents`, the bus as one listener's principal may see it.

The front (`mcpmount.serve.front`) owns one of each; this room imports nothing of it.
"""

from mcpmount.errors import BadConversationError
from mcpmount.serve.sessions._changes import (
    EVENTS,
    Changes,
    Kind,
    ListChanged,
    PromptsChanged,
    ResourcesChanged,
    ToolsChanged,
)
from mcpmount.serve.sessions._logs import LEVELS, Logs
from mcpmount.serve.sessions._sessions import CONVERSATION_HEADER, MAX_SESSIONS, Sessions
from mcpmount.serve.sessions._subscriptions import Subscriptions, VisibleEvents

__all__ = [
    "CONVERSATION_HEADER",
    "EVENTS",
    "LEVELS",
    "MAX_SESSIONS",
    "BadConversationError",
    "Changes",
    "Kind",
    "ListChanged",
    "Logs",
    "PromptsChanged",
    "ResourcesChanged",
    "Sessions",
    "Subscriptions",
    "ToolsChanged",
    "VisibleEvents",
]
