"""Many servers at once: mounted concurrently, one outcome each, a required failure first."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial

import anyio

from mcpmount.config import RegistryConfig, ServerSpec
from mcpmount.errors import MountError, ServerError
from mcpmount.registry._servers import Servers
from mcpmount.registry._status import MountOutcome, notes_of
from mcpmount.registry._tables import check_namespaces

__all__ = ["mount_all", "mount_concurrently", "mount_each", "required_as_written"]

logger = logging.getLogger(__name__)


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


async def mount_all(servers: Servers, specs: Mapping[str, ServerSpec], *, fail_fast: bool) -> None:
    """Mount ``specs`` concurrently; see `Registry.mount_all`."""
    check_namespaces(specs)
    outcomes = await mount_concurrently(partial(_outcome, servers), specs, fail_fast=fail_fast)
    failures = {o.server: o.error for o in outcomes if o.error is not None}
    if any(specs[server].required for server in failures):
        mounted = [servers.supervisors.get(o.server) for o in outcomes if o.error is None]
        await servers.close_each([s for s in mounted if s is not None])
        raise MountError(failures)
    for server, exc in failures.items():
        logger.warning("optional server %r was skipped: %s", server, exc.detail)
    servers.failures.update(failures)


async def mount_each(
    servers: Servers,
    specs: Mapping[str, ServerSpec],
    *,
    on_outcome: Callable[[MountOutcome], None] | None = None,
) -> list[MountOutcome]:
    """Mount ``specs`` concurrently, whatever fails; see `Registry.mount_each`."""
    check_namespaces(specs)
    outcomes = await mount_concurrently(
        partial(_outcome, servers), specs, fail_fast=False, on_outcome=on_outcome
    )
    servers.failures.update(  # but not one ``on_outcome`` mounted again meanwhile
        {o.server: o.error for o in outcomes if o.error and o.server not in servers.supervisors}
    )
    by_server = {o.server: o for o in outcomes}
    return [by_server[server] for server in specs]


async def _outcome(servers: Servers, server: str, spec: ServerSpec) -> MountOutcome:
    """Mount one server; say how it went instead of raising."""
    began = anyio.current_time()
    try:
        supervisor = await servers.mount(server, spec)
    except ServerError as exc:
        return MountOutcome(server, spec, anyio.current_time() - began, error=exc)
    tools = servers.catalog.of(server)
    seconds = supervisor.connection.startup_seconds or anyio.current_time() - began
    deferred = sum(e.deferred for e in tools)
    notes = notes_of(supervisor, tools)
    return MountOutcome(server, spec, seconds, len(tools), deferred, notes=notes)
