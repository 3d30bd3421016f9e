"""Upstream servers: the owner-task connection, its checked tool list, and a supervisor
that carries a mounted server across restarts."""

from mcpmount.upstream._asking import Asking
from mcpmount.upstream._connection import Connection, ServerState
from mcpmount.upstream._listing import check_tools, list_all_tools
from mcpmount.upstream._supervisor import Supervisor

__all__ = ["Asking", "Connection", "ServerState", "Supervisor", "check_tools", "list_all_tools"]
