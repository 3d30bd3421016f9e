"""Many servers at once: mounted concurrently, one outcome each, a required failure first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping

import anyio

from mcpmount import naming
from mcpmount.config import ServerSpec
from mcpmount.errors import ConfigError
from mcpmount.registry._status import MountOutcome

__all__ = ["check_namespaces", "mount_concurrently"]


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
