"""Upstream servers: the owner-task connection, its checked tool list (and prompts and
resources, and what they said of caching them), requests other than tool calls, and a
supervisor that carries a mounted server across restarts."""

from mcpmount.upstream._asking import Asking
from mcpmount.upstream._connection import Connection, ServerState
from mcpmount.upstream._content import ServerContent, check_content, list_content
from mcpmount.upstream._freshness import Freshness
from mcpmount.upstream._listing import check_tools, list_all_tools, list_pages
from mcpmount.upstream._requests import request, set_subscription
from mcpmount.upstream._supervisor import Supervisor
from mcpmount.upstream._vetting import SchemaVetting

__all__ = [
    "Asking",
    "Connection",
    "Freshness",
    "SchemaVetting",
    "ServerContent",
    "ServerState",
    "Supervisor",
    "check_content",
    "check_tools",
    "list_all_tools",
    "list_content",
    "list_pages",
    "request",
    "set_subscription",
]
