"""The first mounts of `serve`, as the front's first answers wait for them.

Many clients list the tools once, right after connecting, and give up after a few seconds
(the OpenAI Agents SDK waits 5 s). So the first ``tools/list`` (and every request that
waits like it) waits for the required servers (those whose table says ``required =
true``: `required_as_written`), and for the others at most ``first_list_wait`` seconds
from the start (2 s by default); then it answers with what is mounted. A server that
mounts later is a list change, told to every client as any other
(`mcpmount.serve.sessions._changes`); one that fails is retried (`Retries`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import anyio

from mcpmount.config import ServerSpec
from mcpmount.registry import MountOutcome, Registry
from mcpmount.serve.front._retries import Retries

__all__ = ["Startup", "mount_initial"]

logger = logging.getLogger(__name__)


class Startup:
    """Where the initial mounts stand; `serve` sets it, the front waits on it."""

    def __init__(self) -> None:
        self.required = anyio.Event()
        """Set once every required server is mounted (or the mounts failed)."""
        self.mounted = anyio.Event()
        """Set once every initial mount ended, in success or not."""
        self.answering = anyio.Event()
        """Set once the front answers lists: the required servers are up, and the rest
        are up too or had their time (`hold_first_answers`)."""

    async def hold_first_answers(self, bound: float) -> None:
        """Set `answering` once the required servers are mounted and either every server
        is, or ``bound`` seconds have passed since this started."""
        with anyio.move_on_after(bound):
            await self.mounted.wait()
        await self.required.wait()
        if not self.mounted.is_set():
            logger.info(
                "answering with the servers mounted so far; the others are announced as they come"
            )
        self.answering.set()


async def mount_initial(
    registry: Registry, servers: Mapping[str, ServerSpec], startup: Startup, retries: Retries
) -> None:
    """Mount ``servers``, setting ``startup``'s events; each optional one that fails goes
    to ``retries`` as soon as it fails.

    The required servers and the optional ones are mounted concurrently, in two groups, so
    that `Startup.required` is set as soon as the required ones are up. A required server's
    failure cancels the optional mounts too.

    Raises:
        MountError: A required server failed; what its group mounted was closed (the
            optional servers are closed with the registry).
        ConfigError: A namespace is invalid; nothing of its group was started.
    """
    required = {name: spec for name, spec in servers.items() if spec.required}
    optional = {name: spec for name, spec in servers.items() if not spec.required}
    failure: Exception | None = None

    def ended(outcome: MountOutcome) -> None:
        if outcome.error is not None:
            retries.failed(outcome.server, outcome.spec, outcome.error)

    try:
        async with anyio.create_task_group() as tg:

            async def mount_required() -> None:
                nonlocal failure
                try:
                    await registry.mount_all(required)
                except Exception as exc:  # a required server failed: so does the start
                    failure = exc
                    tg.cancel_scope.cancel()
                startup.required.set()

            async def mount_optional() -> None:
                nonlocal failure
                try:
                    await registry.mount_each(optional, on_outcome=ended)
                except Exception as exc:  # an invalid namespace: nothing of it started
                    failure = exc
                    tg.cancel_scope.cancel()

            tg.start_soon(mount_required)
            tg.start_soon(mount_optional)
    finally:
        startup.required.set()
        startup.mounted.set()
    if failure is not None:
        raise failure
