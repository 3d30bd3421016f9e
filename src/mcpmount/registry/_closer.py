"""Closers: each unmounts one server, whatever state it is in, and never raises."""

from __future__ import annotations

from typing import Protocol

import anyio

from mcpmount.upstream import Connection, Supervisor

__all__ = ["Closer", "Unmounting", "close_all"]


class Unmounting(Protocol):
    """What a closer needs of the registry's servers (`Servers`)."""

    def forget(self, supervisor: Supervisor) -> None:
        """Drop the server's names, synchronously; a no-op if it is already gone."""
        ...

    def connections_of(self, supervisor: Supervisor) -> list[Connection]:
        """The server's connections to close: its current one and a restart's."""
        ...

    async def close_clients(self, server: str) -> None:
        """Close the server's connections of its own clients (``per_client``)."""
        ...


class Closer:
    """Unmounts one server. Idempotent, callable from any task, never raises, bounded."""

    __slots__ = ("_servers", "_supervisor")

    def __init__(self, servers: Unmounting, supervisor: Supervisor) -> None:
        self._servers = servers
        self._supervisor = supervisor

    @property
    def server(self) -> str:
        """The namespace of the server this closes."""
        return self._supervisor.server

    async def __call__(self) -> None:
        supervisor = self._supervisor
        supervisor.close()
        self._servers.forget(supervisor)
        connections = self._servers.connections_of(supervisor)
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in connections:
                    tg.start_soon(connection.aclose)
                tg.start_soon(self._servers.close_clients, supervisor.server)


async def close_all(closers: list[Closer]) -> None:
    """Run closers concurrently; they never raise."""
    if not closers:
        return
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for closer in closers:
                tg.start_soon(closer)
