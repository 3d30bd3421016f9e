"""Many servers at once: mounted concurrently, one outcome each, a required failure first."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping

import anyio

from mcpmount import naming
from mcpmount.config import RegistryConfig, ServerSpec
from mcpmount.errors import ConfigError
from mcpmount.registry._status import MountOutcome
from mcpmount.upstream import Asking, Connection, Supervisor

__all__ = ["check_namespaces", "each_connection", "mount_concurrently", "required_as_written"]


def required_as_written(config: RegistryConfig) -> RegistryConfig:
    """``config`` with each server required only where its table says ``required = true``.

    ``serve`` and the listing commands read a config this way: a server whose table does
    not say (a host's file has no such key) is optional, so one server that fails or
    hangs never takes the others down. The library (`open_registry`) keeps the field's
    default, required, for a caller who mounts in code and wants all or nothing.
    """
    optional = {"required": False}
    servers = {
        name: spec if "required" in spec.model_fields_set else spec.model_copy(update=optional)
        for name, spec in config.servers.items()
    }
    return dataclasses.replace(config, servers=servers)


def check_namespaces(servers: Collection[str]) -> None:
    """Raise one ``ConfigError`` naming every invalid namespace; nothing is started then."""
    bad = [
        f"servers.{server}: {problem}"
        for server in servers
        if (problem := naming.namespace_problem(server)) is not None
    ]
    if bad:
        raise ConfigError("<mount>", bad)


async def mount_concurrently(
    mount: Callable[[str, ServerSpec], Awaitable[MountOutcome]],
    servers: Mapping[str, ServerSpec],
    *,
    fail_fast: bool,
    on_outcome: Callable[[MountOutcome], None] | None = None,
) -> list[MountOutcome]:
    """Run ``mount`` for every server in one task group; startup takes about as long as
    the slowest server.

    With ``fail_fast`` the first required server that fails cancels the other mounts,
    which then have no outcome. ``on_outcome`` is called as each mount ends.

    Returns:
        The outcomes, in the order the mounts ended.
    """
    outcomes: list[MountOutcome] = []
    async with anyio.create_task_group() as tg:

        async def mount_one(server: str, spec: ServerSpec) -> None:
            outcome = await mount(server, spec)
            if outcome.error is not None and spec.required and fail_fast:
                tg.cancel_scope.cancel()
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

        for server, spec in servers.items():
            tg.start_soon(mount_one, server, spec)
    return outcomes


async def each_connection(
    servers: Mapping[str, Supervisor],
    starting: Iterable[Connection],
    act: Callable[[Asking], Awaitable[None]],
) -> None:
    """Run ``act`` (which must not raise) on the client side of every connection, starting
    ones included, concurrently and each for at most its server's startup timeout."""
    connections = [*starting, *(supervisor.connection for supervisor in servers.values())]

    async def one(connection: Connection) -> None:
        bound = connection.effective.startup_timeout
        with anyio.move_on_after(bound):
            await act(connection.asking)

    async with anyio.create_task_group() as tg:
        for connection in connections:
            tg.start_soon(one, connection)
