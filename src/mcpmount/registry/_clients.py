"""Which connection serves a request: the shared one, or its client's own.

A request to a server with ``sessions = "per_client"`` that says whose it is
(`client_key_of` its ``context``) goes over that client's connection, from the server's
`ClientSessions` (made on first use); every other request, and every listing, goes over
the server's shared connection. `Clients` also holds the hook that gives a client's HTTP
session credentials of its own (`ConnectionAuth`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

import httpx2

from mcpmount.config import HttpServer, ServerSpec
from mcpmount.upstream import (
    ClientKey,
    ClientSessions,
    Connection,
    Supervisor,
    client_key_of,
    uses_pool,
)

__all__ = ["ClientOpener", "Clients", "ConnectionAuth"]

ConnectionAuth = Callable[[str, HttpServer, ClientKey], httpx2.Auth | None]
"""Given a url server's namespace, its spec and a client's key, the ``httpx2.Auth`` that
client's own session of it authenticates with; None keeps the server's own (``oauth``,
``headers_command``). Called once per client session, as it opens."""


_Opener = Callable[[ClientKey], Coroutine[Any, Any, Connection]]


ClientOpener = Callable[[str, ServerSpec, httpx2.Auth | None], Coroutine[Any, Any, Connection]]
"""Starts a client's own connection of a server (its namespace, its spec, the credentials
of its HTTP session if it has its own) and returns it ready (`Servers.open_client`)."""


class Clients:
    """Every ``per_client`` server's `ClientSessions`, made on first use.

    Args:
        open_connection: Starts one client's connection (`ClientOpener`).
        start_soon: Runs a task beside the servers (a session's close).
    """

    def __init__(
        self,
        open_connection: ClientOpener,
        start_soon: Callable[[Callable[[], Coroutine[Any, Any, object]]], None],
    ) -> None:
        self._open = open_connection
        self._start_soon = start_soon
        self._pools: dict[str, ClientSessions] = {}
        self.connection_auth: ConnectionAuth | None = None
        """Gives a client's own HTTP session its own credentials (see `ConnectionAuth`)."""

    def pool(self, server: str) -> ClientSessions | None:
        """``server``'s client sessions, if any were opened."""
        return self._pools.get(server)

    async def connection(
        self, supervisor: Supervisor, context: object | None, name: str, kind: str = "tool"
    ) -> tuple[Connection, contextlib.AbstractContextManager[None]]:
        """The connection a request to ``supervisor``'s server goes over, and what counts
        it in flight there: its client's own (opened now if need be), or the shared one.

        Raises:
            ClientSessionsFullError: A new client past the server's ``max_client_sessions``.
            ServerNotRunningError: The client's connection could not start.
        """
        key = client_key_of(context)
        if key is None or not uses_pool(supervisor.spec, key):
            return supervisor.connection, contextlib.nullcontext()
        pool = self._pools.get(supervisor.server)
        if pool is None or pool.spec is not supervisor.spec:
            if pool is not None:  # a reload replaced its spec: the old sessions go
                await pool.aclose()
            pool = self._pools[supervisor.server] = ClientSessions(
                supervisor.server,
                supervisor.spec,
                self._opener(supervisor),
                self._start_soon,
            )
        connection = await pool.connection(key, name, kind)
        return connection, pool.using(connection)

    def _opener(
        self, supervisor: Supervisor
    ) -> Callable[[ClientKey], Coroutine[Any, Any, Connection]]:
        server, spec = supervisor.server, supervisor.spec

        async def open_connection(key: ClientKey) -> Connection:
            auth = None
            if isinstance(spec, HttpServer) and self.connection_auth is not None:
                auth = self.connection_auth(server, spec, key)
            return await self._open(server, spec, auth)

        return open_connection

    def connections(self) -> list[Connection]:
        """Every client's own connection, of every server."""
        return [c for pool in self._pools.values() for c in pool.connections]

    async def end(self, identity: str) -> None:
        """Close the sessions every server keeps for the client ``identity``."""
        for pool in list(self._pools.values()):
            await pool.end(identity)

    async def close(self, server: str) -> None:
        """Close every client session of ``server`` (it is unmounted)."""
        pool = self._pools.pop(server, None)
        if pool is not None:
            await pool.aclose()
