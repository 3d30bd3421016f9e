"""Upstream servers: the owner-task connection, its checked tool list (and prompts and
resources, and what they said of caching them), requests other than tool calls, and a
supervisor that carries a mounted server across restarts."""

from mcpmount.upstream._asking import Asking
from mcpmount.upstream._connection import Connection, ServerState
from mcpmount.upstream._content import ServerContent, check_content, list_content
from mcpmount.upstream._freshness import Freshness
from mcpmount.upstream._listing import check_tools, list_all_tools, list_pages, needs_task
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
    "Connection",
    "Freshness",
    "SchemaVetting",
    "ServerContent",
    "ServerState",
    "Supervisor",
    "cancel_task",
    "check_content",
    "check_tools",
    "create_task",
    "get_task",
    "list_all_tools",
    "list_content",
    "list_pages",
    "list_tasks",
    "needs_task",
    "request",
    "set_subscription",
    "wait_result",
]
