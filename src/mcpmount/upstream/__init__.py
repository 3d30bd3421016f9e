"""One upstream server: its owner-task connection and its checked tool list."""

from mcpmount.upstream._connection import Connection, ServerState
from mcpmount.upstream._listing import check_tools, list_all_tools

__all__ = ["Connection", "ServerState", "check_tools", "list_all_tools"]
