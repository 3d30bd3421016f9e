"""One server across its connections: the first one, and every restart after it died.

The registry asks its supervisor what a server's state is, whether calls must wait, and
whether a server that died is started again; the supervisor runs the restarts with an
exponential backoff that outlives one restart, so a crash loop waits longer each time.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from mcpmount.config import ServerSpec
from mcpmount.errors import RegistryError
from mcpmount.upstream._connection import Connection, ServerState

__all__ = ["Supervisor"]

logger = logging.getLogger(__name__)

RESTART_BACKOFF = 0.5
"""Seconds before the first restart attempt; each attempt doubles it."""

RESTART_BACKOFF_CAP = 30.0
RESTART_STABLE = 60.0
"""Seconds a restarted server must stay up before its backoff starts over."""
RESTART_ATTEMPTS = 10
"""Consecutive failed restarts after which a server is left failed."""


class _Phase(enum.Enum):
    UP = enum.auto()
    """Its connection is the truth (starting, ready or failed)."""
    RESTARTING = enum.auto()
    GAVE_UP = enum.auto()
    """Its restarts failed `RESTART_ATTEMPTS` times in a row: it stays failed."""
    CLOSED = enum.auto()


@dataclass(eq=False)
class Supervisor:
    """A mounted server's life: its connection, restarts and backoff."""

    server: str
    spec: ServerSpec
    connection: Connection
    """The current connection (the first, or the last restart's)."""

    restarts: int = 0
    """How many times the server was started again after dying."""

    error: str | None = None
    """Why it failed, or why its last restart or tool-list change was not applied."""

    ready: anyio.Event = field(default_factory=anyio.Event)
    """Set unless a restart is under way (a fresh, unset one is put in while it runs);
    calls that arrive during a restart wait on it."""

    _phase: _Phase = _Phase.UP
    _stopped: anyio.Event = field(default_factory=anyio.Event)
    _backoff: float = RESTART_BACKOFF
    _up_since: float = field(default_factory=anyio.current_time)

    @property
    def state(self) -> ServerState:
        """Where the server is in its life."""
        match self._phase:
            case _Phase.CLOSED:
                return ServerState.CLOSED
            case _Phase.RESTARTING:
                return ServerState.RESTARTING
            case _Phase.UP | _Phase.GAVE_UP:
                return self.connection.state

    @property
    def closing(self) -> bool:
        """Whether it is being (or was) closed: no restart may begin."""
        return self._phase is _Phase.CLOSED

    @property
    def restarting(self) -> bool:
        """Whether a restart is under way."""
        return self._phase is _Phase.RESTARTING

    def close(self) -> None:
        """Mark it closed: restarts stop, and calls waiting out a restart stop waiting."""
        self._phase = _Phase.CLOSED
        self._stopped.set()
        self.ready.set()

    def lost(self, connection: Connection) -> bool:
        """Take note that ``connection`` died by itself; return whether to restart.

        On True the caller must run `restart` (in a task of its own); calls wait for it.
        """
        if connection is not self.connection or self._phase is not _Phase.UP:
            return False  # an old connection, a restart under way, given up, or closing
        self.error = connection.error
        if self.spec.restart != "on-failure":
            return False
        if anyio.current_time() - self._up_since > RESTART_STABLE:
            self._backoff = RESTART_BACKOFF  # it was healthy for a while: start over
        self._phase = _Phase.RESTARTING
        self.ready = anyio.Event()
        return True

    async def restart(self, start: Callable[[], Awaitable[Connection]]) -> Connection | None:
        """Start the server again with exponential backoff, up to a number of attempts.

        Args:
            start: Connects a replacement and publishes its tools, or raises
                ``RegistryError`` (having closed what it started).

        Returns:
            The new connection, or None if the server stays failed or was closed.
        """
        try:
            for attempt in range(1, RESTART_ATTEMPTS + 1):
                with anyio.move_on_after(self._backoff):
                    await self._stopped.wait()
                if self.closing:
                    return None
                self._backoff = min(self._backoff * 2, RESTART_BACKOFF_CAP)
                logger.info("restarting server %r (attempt %d)", self.server, attempt)
                try:
                    connection = await start()
                except RegistryError as exc:
                    self.error = str(exc)
                    logger.warning("server %r did not restart: %s", self.server, exc)
                    continue
                self.connection = connection
                self.restarts += 1
                self._up_since = anyio.current_time()
                self.error = None
                logger.info("server %r restarted (%d restarts)", self.server, self.restarts)
                return connection
            logger.warning(
                "server %r stays failed after %d restart attempts",
                self.server,
                RESTART_ATTEMPTS,
            )
            if self._phase is _Phase.RESTARTING:
                self._phase = _Phase.GAVE_UP
            return None
        finally:
            if self._phase is _Phase.RESTARTING:
                self._phase = _Phase.UP
            self.ready.set()
