"""One server across its connections: the first one, and every restart after it died.

The registry asks its supervisor what a server's state is, whether calls must wait, and
whether a server that died is started again; the supervisor runs the restarts with an
exponential backoff that outlives one restart, so a crash loop waits longer each time.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from mcpmount.config import ServerSpec
from mcpmount.errors import RegistryError
from mcpmount.upstream._connection import Connection
from mcpmount.upstream._state import ServerState

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
    DORMANT = enum.auto()
    """Not running (not started yet, or stopped when idle): the next call starts it."""
    WAKING = enum.auto()
    """A call (or a background start) is starting it; calls wait."""


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

    cached: bool = False
    """Whether its published lists are cached ones not yet confirmed by a live listing."""

    busy: int = 0
    """Calls in flight (an idle server is stopped only when none is)."""

    last_call: float = field(default_factory=anyio.current_time)
    """When its latest call ended (or it started)."""

    _phase: _Phase = _Phase.UP
    _woken: bool = False
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
            case _Phase.DORMANT:
                return ServerState.IDLE if self._woken else ServerState.LAZY
            case _Phase.WAKING:
                return ServerState.STARTING
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

    @property
    def serving(self) -> bool:
        """Whether a call may go straight to its connection: up and ready, no restart under
        way, nothing to wake."""
        return self._phase is _Phase.UP and self.connection.state is ServerState.READY

    def in_use(self) -> contextlib.AbstractContextManager[None]:
        """Count a call (or another request) in flight, and when the last one ended."""
        return _InUse(self)

    @property
    def dormant(self) -> bool:
        """Whether it is not running and the next call must start it (`wake`)."""
        return self._phase is _Phase.DORMANT

    @property
    def stopped(self) -> anyio.Event:
        """Set once it is closed."""
        return self._stopped

    def sleep(self) -> None:
        """Mark it not running (published from a cache, or stopped when idle)."""
        if self._phase is _Phase.UP:
            self._phase = _Phase.DORMANT

    def wake(self) -> bool:
        """Take note that it must start; return whether the caller must run `start`.

        True once per start: concurrent first calls start one server and wait for it.
        """
        if self._phase is not _Phase.DORMANT:
            return False
        self._phase = _Phase.WAKING
        self.ready = anyio.Event()
        return True

    async def start(self, start: Callable[[], Awaitable[Connection]]) -> Connection | None:
        """Run ``start`` once after `wake`; on failure it stays not running (and says why).

        Args:
            start: Connects the server and publishes its live lists, or raises
                ``RegistryError`` (having closed what it started).
        """
        try:
            connection = await start()
        except RegistryError as exc:
            self.error = str(exc)
            logger.warning("server %r did not start: %s", self.server, exc)
            return None
        else:
            self.connection = connection
            self.cached = False
            self._woken = True
            self._up_since = self.last_call = anyio.current_time()
            self.error = None
            return connection
        finally:
            if self._phase is _Phase.WAKING:
                up = self.connection.state is ServerState.READY
                self._phase = _Phase.UP if up else _Phase.DORMANT
            self.ready.set()

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


class _InUse(contextlib.AbstractContextManager[None]):
    """`Supervisor.in_use`: a plain class, as every call passes through it."""

    __slots__ = ("_supervisor",)

    def __init__(self, supervisor: Supervisor) -> None:
        self._supervisor = supervisor

    def __enter__(self) -> None:
        self._supervisor.busy += 1

    def __exit__(self, *exc_info: object) -> None:
        self._supervisor.busy -= 1
        self._supervisor.last_call = anyio.current_time()
