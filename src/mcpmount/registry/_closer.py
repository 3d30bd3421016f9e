"""Closers: each unmounts one server, whatever state it is in, and never raises."""

from __future__ import annotations

from mcpmount.registry._servers import Servers
from mcpmount.upstream import Supervisor

__all__ = ["Closer"]


class Closer:
    """Unmounts one server. Idempotent, callable from any task, never raises, bounded.

    It is a handle on `Servers.close` for that server (what `Registry.mount` returns).
    """

    __slots__ = ("_servers", "_supervisor")

    def __init__(self, servers: Servers, supervisor: Supervisor) -> None:
        self._servers = servers
        self._supervisor = supervisor

    @property
    def server(self) -> str:
        """The namespace of the server this closes."""
        return self._supervisor.server

    async def __call__(self) -> None:
        await self._servers.close(self._supervisor)
