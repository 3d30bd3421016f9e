"""Upstream servers: one connection per server, its checked lists, and its restarts.

The owner-task connection (``_connection``) lists and checks the server's tools
(``_listing``, ``_vetting``, ``_plain_schema``) and its prompts and resources
(``_content``), and keeps what they said of caching them (``_freshness``); it tells its
failures (``_failures``), answers what the server asks of its client (``_asking``), hears
its log messages (``_logs``) and change notices (``_feed``), sends requests other than
tool calls (``_requests``) and task-augmented ones (``_tasks``), and tells it its client
renders MCP Apps (``_apps``). A supervisor (``_supervisor``) carries a mounted server
across restarts; a ``per_client`` server's clients each get a connection of their own
(``_pool``)."""

from mcpmount.upstream._asking import Asking
from mcpmount.upstream._connection import Connection, ServerState
from mcpmount.upstream._content import ServerContent, check_content, list_content
from mcpmount.upstream._freshness import Freshness
from mcpmount.upstream._listing import check_tools, list_all_tools, list_pages, needs_task
from mcpmount.upstream._pool import (
    ClientKey,
    ClientSessions,
    ClientSessionsFullError,
    client_key_of,
    pool_identity,
    uses_pool,
)
from mcpmount.upstream._requests import request, set_subscription
from mcpmount.upstream._supervisor import Supervisor
from mcpmount.upstream._tasks import (
    cancel_task,
    create_task,
    get_task,
    list_tasks,
    wait_result,
)
from mcpmount.upstream._vetting import SchemaVetting

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
