"""Servers that failed to mount under ``serve``, mounted again in the background.

A host starts ``serve`` once and keeps it for hours: a server that crashes or hangs as it
starts (a token not yet set, a network down, a package still downloading) must not take
the other servers down, nor stay down once it is fixed. So each server that is not
required (`mcpmount.registry.required_as_written`) and fails to mount is:

- logged, one warning naming the server, why, and what to do;
- told to the connected clients as ``notifications/message`` (logger: its namespace),
  and to each client that connects while it is down (`Retries.notices`);
- shown by ``mcpmount status`` (`Retries.rows`);
- mounted again in the background, the schedule doubling from `FIRST_DELAY` up to
  `MAX_DELAY`, each delay jittered by ``±JITTER`` so that servers that failed together
  do not retry together, for at most `ATTEMPTS` attempts (about 14 minutes); then it
  is left failed until the config is reloaded (saved, or SIGHUP).

Once it mounts, its tools join the lists and the clients are told
(``notifications/tools/list_changed``), as for any server that mounts late.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import AsyncGenerator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup

from mcpmount.config import ServerSpec
from mcpmount.errors import ServerError
from mcpmount.registry import Registry

__all__ = ["ATTEMPTS", "FIRST_DELAY", "JITTER", "MAX_DELAY", "Retries", "Tell"]

logger = logging.getLogger(__name__)

FIRST_DELAY = 1.0
"""Seconds before the first retry; each retry waits twice as long as the one before."""

MAX_DELAY = 60.0
"""The longest wait between two attempts."""

JITTER = 0.2
"""Each wait is its schedule's value times a random factor in [1 - JITTER, 1 + JITTER]."""

ATTEMPTS = 20
"""Attempts in all, the first mount included: 1, 2, 4, 8, 16, 32, then 60 s apart, so
about 14 minutes of retries before a server is left failed."""

Tell = Callable[[str, mcp_types.LoggingLevel, str], Coroutine[Any, Any, None]]
"""Sends ``(server, level, text)`` to the clients that may see ``server``."""


@dataclass(eq=False)
class _Failing:
    """One server that is down, and where its retries stand."""

    server: str
    spec: ServerSpec
    error: ServerError
    attempts: int = 1
    """Failed attempts so far, the first mount included."""
    retry_at: float | None = None
    """When the next attempt begins (None: one is running, or there is none)."""
    gave_up: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)

    def said(self) -> str:
        """What is next for it, as status and the clients are told."""
        if self.gave_up:
            return (
                f"left failed after {self.attempts} attempts; once it is fixed, save the "
                "config or send serve SIGHUP to try again"
            )
        if self.retry_at is None:
            return f"trying again now (attempt {self.attempts + 1} of {ATTEMPTS})"
        seconds = max(math.ceil(self.retry_at - anyio.current_time()), 1)
        return f"trying again in {seconds} s (attempt {self.attempts + 1} of {ATTEMPTS})"


class Retries:
    """The servers of a served registry that are down, each retried until it mounts.

    Enter `running` for as long as the registry serves; `failed` takes each failure.

    Args:
        registry: The served registry (servers are mounted into it again).
        tell: Sends a message about a server to the clients that may see it.
        rng: The jitter's random source (a seeded one makes the schedule repeatable).
    """

    def __init__(
        self, registry: Registry, tell: Tell | None = None, rng: random.Random | None = None
    ) -> None:
        self._registry = registry
        self._tell = tell
        self._rng = rng or random.Random()
        self._failing: dict[str, _Failing] = {}
        self._tg: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Retry while this is entered; leaving it stops every retry (one mid-mount is
        cancelled, and reaps what it started)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    def delay(self, attempts: int) -> float:
        """Seconds to wait after ``attempts`` failed attempts, jittered."""
        base = min(FIRST_DELAY * 2 ** (attempts - 1), MAX_DELAY)
        return base * self._rng.uniform(1 - JITTER, 1 + JITTER)

    def failed(self, server: str, spec: ServerSpec, error: ServerError) -> None:
        """Take note that ``server`` failed to mount: say so, and retry it (unless it is
        required: then `serve` stops, as it was asked to)."""
        if spec.required:
            return
        if self._tg is None:
            raise RuntimeError("retries are taken only while Retries.running() is entered")
        old = self._failing.pop(server, None)
        if old is not None:
            old.scope.cancel()
        failing = _Failing(server, spec, error)
        failing.retry_at = anyio.current_time() + self.delay(1)
        self._failing[server] = failing
        logger.warning(
            "server %r did not start: %s\nThe other servers are served. Fix it and it mounts "
            "by itself: %s, then less often (at most every %g s); `mcpmount check CONFIG` "
            "starts it alone and says why it fails",
            server,
            error.detail,
            failing.said(),
            MAX_DELAY,
        )
        self._tg.start_soon(self._retry, failing)
        self._tell_soon(server, "warning", f"server {server!r} did not start: {error.detail}")

    async def stop(self) -> None:
        """Stop every retry and forget the failures (before a reload mounts them anew)."""
        failing, self._failing = list(self._failing.values()), {}
        for each in failing:
            each.scope.cancel()
        for each in failing:
            await each.done.wait()

    def rows(self) -> dict[str, dict[str, object]]:
        """What status shows of each server that is down: its latest error, how many
        attempts failed, and what is next."""
        return {
            server: {
                "error": failing.error.detail,
                "attempts": failing.attempts,
                "retry": failing.said(),
            }
            for server, failing in sorted(self._failing.items())
        }

    def notices(self) -> list[tuple[str, str]]:
        """(server, text) for each server that is down: what a client that connects now
        is told."""
        return [
            (server, f"server {server!r} is not mounted: {f.error.detail}; {f.said()}")
            for server, f in sorted(self._failing.items())
        ]

    async def _retry(self, failing: _Failing) -> None:
        server = failing.server
        try:
            with failing.scope:
                while failing.attempts < ATTEMPTS:
                    assert failing.retry_at is not None
                    await anyio.sleep(max(failing.retry_at - anyio.current_time(), 0))
                    failing.retry_at = None
                    try:
                        await self._registry.mount(server, failing.spec)
                    except ServerError as exc:
                        failing.error, failing.attempts = exc, failing.attempts + 1
                        if failing.attempts < ATTEMPTS:
                            failing.retry_at = anyio.current_time() + self.delay(failing.attempts)
                        said = failing.said()
                        logger.info("server %r is still down: %s; %s", server, exc.detail, said)
                        continue
                    if self._failing.get(server) is failing:
                        del self._failing[server]
                    attempts = failing.attempts + 1  # at warning, as its failure was
                    logger.warning("server %r is up, after %d attempts", server, attempts)
                    self._tell_soon(
                        server, "info", f"server {server!r} is up; its tools are listed"
                    )
                    return
                failing.gave_up = True
                logger.warning("server %r: %s: %s", server, failing.said(), failing.error.detail)
                self._tell_soon(server, "error", f"server {server!r} {failing.said()}")
        finally:
            failing.done.set()

    def _tell_soon(self, server: str, level: mcp_types.LoggingLevel, text: str) -> None:
        if self._tell is not None and self._tg is not None:
            self._tg.start_soon(self._tell, server, level, text)
