"""Upstream servers: one owner task per connection, and a supervisor per mounted server."""

from mcpmount.connection import Connection, ServerState  # MERGE: upstream._connection
from mcpmount.upstream._supervisor import Supervisor

__all__ = ["Connection", "ServerState", "Supervisor"]
