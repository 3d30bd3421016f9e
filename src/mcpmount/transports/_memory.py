"""An SDK server run in this process, over memory streams: a seam for tests.

Like httpx's ``MockTransport``: code that takes a `ServerTransport` can be pointed at a
``mcp.server.Server`` or ``MCPServer`` built in the test, with no process or socket. The
messages still go through JSON-RPC and the session, as they would over a pipe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.client import Transport
from mcp.client._memory import SERVER_SHUTDOWN_GRACE, InMemoryTransport
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from mcpmount.transports._base import ServerTransport

__all__ = ["MemoryTransport"]


class MemoryTransport(ServerTransport):
    """Serve ``server`` in a task of the opening task group, over memory streams."""

    def __init__(self, server: Server[Any] | MCPServer) -> None:
        super().__init__()
        self._server = server

    @property
    def close_bound(self) -> float:
        # The SDK gives the server this long to end after EOF, then cancels it.
        return SERVER_SHUTDOWN_GRACE + 1.0

    @property
    def writes_at_once(self) -> bool:
        return True  # the server in this process reads as it is written to

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        # ``on_lost`` stays unused: the server lives and dies with the connection's task.
        return InMemoryTransport(self._server)
