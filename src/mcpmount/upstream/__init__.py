"""Upstream servers: one connection per server, and its restarts.

The owner-task connection (``_connection``) opens its client and fetches the server's
checked lists (``_opening``, over `mcpmount.listing`, whose names are re-exported here),
and says where the server is in its life (``_state``); it tells its failures
(``_failures``), answers what the server asks of its client (``_asking``), hears its log
messages (``_logs``) and change notices (``_feed``), sends requests other than tool calls
(``_requests``) and task-augmented ones (``_tasks``), and tells it its client renders MCP
Apps (``_apps``). A supervisor (``_supervisor``) carries a mounted server across
restarts; a ``per_client`` server's clients each get a connection of their own
(``_pool``)."""

from mcpmount.listing import (
    Freshness,
    SchemaVetting,
    ServerContent,
    check_content,
    check_tools,
    list_all_tools,
    list_content,
    list_pages,
    needs_task,
)
from mcpmount.upstream._asking import Asking
from mcpmount.upstream._connection import Connection
from mcpmount.upstream._pool import (
    ClientKey,
    ClientSessions,
    ClientSessionsFullError,
    client_key_of,
    pool_identity,
    uses_pool,
)
from mcpmount.upstream._requests import request, set_subscription
from mcpmount.upstream._state import ServerState
from mcpmount.upstream._supervisor import Supervisor
from mcpmount.upstream._tasks import (
    cancel_task,
    create_task,
    get_task,
    list_tasks,
    wait_result,
)

__all__ = [
    "Asking",
    "ClientKey",
    "ClientSessions",
    "ClientSessionsFullError",
    "Connection",
    "Freshness",
    "SchemaVetting",
    "ServerContent",
    "ServerState",
    "Supervisor",
    "cancel_task",
    "check_content",
    "check_tools",
    "client_key_of",
    "create_task",
    "get_task",
    "list_all_tools",
    "list_content",
    "list_pages",
    "list_tasks",
    "needs_task",
    "pool_identity",
    "request",
    "set_subscription",
    "uses_pool",
    "wait_result",
]
