"""Closers: each unmounts one server, whatever state it is in, and never raises."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from mcpmount.upstream import Supervisor

if TYPE_CHECKING:
    from mcpmount.registry._registry import Registry

__all__ = ["Closer", "close_all"]


class Closer:
    """Unmounts one server. Idempotent, callable from any task, never raises, bounded."""

    __slots__ = ("_registry", "_server")

    def __init__(self, registry: Registry, server: Supervisor) -> None:
        self._registry = registry
        self._server = server

    @property
    def server(self) -> str:
        """The namespace of the server this closes."""
        return self._server.server

    async def __call__(self) -> None:
        supervisor = self._server
        supervisor.close()
        registry = self._registry
        registry._forget(supervisor)  # pyright: ignore[reportPrivateUsage]
        connections = registry._connections_of(supervisor)  # pyright: ignore[reportPrivateUsage]
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in connections:
                    tg.start_soon(connection.aclose)


async def close_all(closers: list[Closer]) -> None:
    """Run closers concurrently; they never raise."""
    if not closers:
        return
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for closer in closers:
                tg.start_soon(closer)
