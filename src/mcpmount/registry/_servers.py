"""The mounted servers' lives: each one's connections, from its mount to its close.

`Servers` builds on `ServerTables` (what is published). A server that dies is handed to
its `Supervisor`, which may start it again; meanwhile its names stay, and calls get "not
running (why)". A server published from its cached lists (`ManifestCache`) is started
behind it, or by its first call, and stopped again when idle (``idle_timeout``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TypeVarTuple

import anyio
import httpx2
import mcp_types

from mcpmount.catalog import Pins, registry_uri
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import (
    NotSupportedError,
    RegistryError,
    ServerStartError,
)
from mcpmount.handlers import ClientHandlers
from mcpmount.manifests import ManifestStore
from mcpmount.processes import Reaper
from mcpmount.registry._clients import Clients
from mcpmount.registry._starting import ManifestCache, refused, start_policy
from mcpmount.registry._tables import ServerTables, check_namespaces
from mcpmount.transports import transport_for
from mcpmount.upstream import (
    Asking,
    Connection,
    SchemaVetting,
    ServerState,
    Supervisor,
    set_subscription,
)

__all__ = ["Servers"]

logger = logging.getLogger(__name__)

Args = TypeVarTuple("Args")


class Servers(ServerTables):
    """The registry's servers (`ServerTables`) and their lives: mounted, restarted,
    started from cached lists, stopped when idle, closed.

    Enter it from the task that will also leave it (`Registry` does); leaving it closes
    every server.

    Args:
        settings, pins, handlers, store: The registry's (see `Registry`).
        refresh: Mount every server from its live lists (``refresh_cache``).
    """

    def __init__(
        self,
        settings: RegistrySettings,
        pins: Pins | None,
        handlers: ClientHandlers | None,
        store: ManifestStore | None,
        *,
        refresh: bool,
    ) -> None:
        super().__init__(settings, pins)
        self.handlers = handlers
        """Given to each connection as it starts."""
        self.schemas = SchemaVetting()
        """Verdicts on the tool schemas its servers listed: each distinct one checked once."""
        self.on_task_status: Callable[[str, mcp_types.Task], None] | None = None
        """Told of each task status a server reports (`Tasks.notify`)."""
        self._log_level: mcp_types.LoggingLevel | None = None
        self._log_levels: dict[str, mcp_types.LoggingLevel] = {}
        """Servers asked for a level of their own (`set_log_level` with ``server``)."""
        self._mounting: set[str] = set()
        self._starting: set[Connection] = set()
        self._reaper = Reaper()
        """Ends every stdio server's process group if this process dies without closing."""
        self._cache = ManifestCache(lambda: self.settings, self.schemas, store, refresh=refresh)
        """Cached lists: what a server mounts from, and what it writes once up."""
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self.clients = Clients(self.open_client, self.start_soon)
        """The connections of clients of ``per_client`` servers, by server and client."""

    @property
    def reaper(self) -> Reaper:
        """Ends every process group it watches if this process dies without closing."""
        return self._reaper

    async def __aenter__(self) -> None:
        if self._exit_stack is not None or self._closed:
            raise RuntimeError("a Registry can be entered only once")
        async with contextlib.AsyncExitStack() as stack:
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            self._exit_stack = stack.pop_all()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
        assert self._exit_stack is not None
        await self._exit_stack.__aexit__(None, None, None)

    # -- mounting -----------------------------------------------------------------------------

    async def mount(self, server: str, spec: ServerSpec) -> Supervisor:
        """Mount one server, all or nothing: from its cached lists, or live."""
        check_namespaces([server])
        if server in self.supervisors or server in self._mounting:
            raise ServerStartError(server, "a server with this namespace is already mounted")
        self._mounting.add(server)
        try:
            supervisor = await self._from_cache(server, spec)
            if supervisor is None:
                connection = await self._connect(server, spec)
                supervisor = Supervisor(server, spec, connection)
                await self._publish_or_close(supervisor, connection, first=True)
                supervisor.ready.set()
                await self._cache.remember(spec, connection)
        finally:
            self._mounting.discard(server)
        self.failures.pop(server, None)
        logger.info("mounted server %r with %d tools", server, len(supervisor.connection.tools))
        if supervisor.connection.state is ServerState.FAILED:  # it died before it was committed
            self.lost(supervisor.connection)
        return supervisor

    async def _from_cache(self, server: str, spec: ServerSpec) -> Supervisor | None:
        """Publish ``server`` from its cached lists, if its policy and the cache allow
        (`ManifestCache.read`); a background server starts behind it at once.

        Returns:
            Its supervisor, dormant (a background one already starting); None to mount it
            from its live list (eager, no usable entry, or an entry the pins refused).
        """
        cached = await self._cache.read(server, spec)
        if cached is None:
            return None
        supervisor, tools, content = cached
        try:
            self.publish(supervisor, tools, content, first=True)
        except RegistryError as exc:
            refused(server, exc)
            return None
        if start_policy(spec, self.settings) == "background":
            self.wake(supervisor)
        return supervisor

    async def _connect(self, server: str, spec: ServerSpec) -> Connection:
        """Start one connection in the task group and wait until it is ready."""
        connection = Connection(
            server,
            spec,
            self.settings,
            on_lost=self.lost,
            on_tools=self._relisted,
            handlers=self.handlers,
            on_updated=self._updated,
            on_task_status=self._task_status,
            log_level=self.log_level_of(server),
            reaper=self._reaper,
            schemas=self.schemas,
        )
        await self.start_connection(connection)
        return connection

    async def open_client(
        self, server: str, spec: ServerSpec, auth: httpx2.Auth | None
    ) -> Connection:
        """Start a client's own connection of ``server`` (``per_client``; ``auth``: its HTTP
        session's own credentials) in the task group; return it ready (`ClientOpener`)."""
        connection = Connection(
            server,
            spec,
            self.settings,
            handlers=self.handlers,
            log_level=self.log_level_of(server),
            reaper=self._reaper,
            schemas=self.schemas,
            use_transport=transport_for(
                spec, self.settings, self._reaper, server=server, auth=auth
            ),
        )
        await self.start_connection(connection)
        return connection

    def log_level_of(self, server: str) -> mcp_types.LoggingLevel | None:
        """The level of log messages asked of ``server`` (its own, else every server's)."""
        return self._log_levels.get(server) or self._log_level

    async def start_connection(self, connection: Connection) -> None:
        """Run ``connection``'s owner task in the task group; return once it is ready.
        While it starts, closing the registry, or its server, cuts the start short."""
        self._starting.add(connection)
        try:
            await self._task_group().start(connection.run)
        finally:
            self._starting.discard(connection)

    async def reconnect(self, supervisor: Supervisor) -> Connection:
        """Start a new connection of ``supervisor``'s server and publish its lists over the
        old ones; on refusal close it and raise."""
        connection = await self._connect(supervisor.server, supervisor.spec)
        await self._publish_or_close(supervisor, connection, first=False)
        return connection

    async def _publish_or_close(
        self, supervisor: Supervisor, connection: Connection, *, first: bool
    ) -> None:
        try:
            self.publish(supervisor, connection.tools, connection.content, first=first)
        except RegistryError:
            await connection.aclose()
            raise

    # -- closing ------------------------------------------------------------------------------

    async def unmount(self, server: str) -> None:
        """Close one server and drop its names; does nothing if it is not mounted."""
        supervisor = self.supervisors.get(server)
        if supervisor is not None:
            await self.close(supervisor)

    async def close(self, supervisor: Supervisor) -> None:
        """Unmount ``supervisor``'s server, whatever state it is in: its names, its
        connection and a restart's that starts, its clients' own. Idempotent, callable
        from any task, bounded; never raises."""
        supervisor.close()
        self.forget(supervisor)
        starting = [c for c in self._starting if c.server == supervisor.server]
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in (supervisor.connection, *starting):
                    tg.start_soon(connection.aclose)
                tg.start_soon(self.clients.close, supervisor.server)

    async def close_each(self, supervisors: list[Supervisor]) -> None:
        """`close` each of ``supervisors`` concurrently; never raises."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for supervisor in supervisors:
                    tg.start_soon(self.close, supervisor)

    async def aclose(self) -> None:
        """Close every server concurrently. Idempotent; never raises."""
        self._closed = True
        for supervisor in self.supervisors.values():  # before any await: no restart may begin
            supervisor.close()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in list(self._starting):
                    tg.start_soon(connection.aclose)
                tg.start_soon(self.close_each, list(self.supervisors.values()))
            await self._reaper.aclose()
            await self._cache.aclose()

    # -- what upstream connections report -----------------------------------------------------

    def _task_status(self, connection: Connection, task: mcp_types.Task) -> None:
        if self.on_task_status is not None:
            self.on_task_status(connection.server, task)

    def lost(self, connection: Connection) -> None:
        """A ready server died by itself. Its names stay: calls get "not running (why)"."""
        supervisor = self.supervisors.get(connection.server)
        if supervisor is None or self._closed or not supervisor.lost(connection):
            return
        self.start_soon(self._restart, supervisor)

    async def _restart(self, supervisor: Supervisor) -> None:
        subscribed = set(supervisor.connection.feed.subscriptions)
        connection = await supervisor.restart(lambda: self.reconnect(supervisor))
        if connection is not None and connection.state is ServerState.FAILED:
            self.lost(connection)  # it died before it was committed
        elif connection is not None:
            await self.subscribe_again(supervisor, subscribed)

    def wake(self, supervisor: Supervisor) -> None:
        """Start a dormant server behind its published list (once, however many ask)."""
        if supervisor.wake():
            self.start_soon(self._start, supervisor)

    async def _start(self, supervisor: Supervisor) -> None:
        server, spec = supervisor.server, supervisor.spec

        async def start() -> Connection:
            if supervisor.closing:  # closed (the registry too) before this task ran
                raise ServerStartError(server, "it was closed before it started")
            return await self.reconnect(supervisor)

        logger.info("starting server %r (start = %r)", server, start_policy(spec, self.settings))
        subscribed = set(supervisor.connection.feed.subscriptions)  # before it stopped idle
        connection = await supervisor.start(start)
        if connection is None:
            return
        if connection.state is ServerState.FAILED:  # it died before it was committed
            self.lost(connection)
            return
        await self._cache.remember(spec, connection)
        await self.subscribe_again(supervisor, subscribed)
        idle = connection.effective.idle_timeout
        if idle is not None:
            await self._stop_when_idle(supervisor, connection, idle)

    async def _stop_when_idle(
        self, supervisor: Supervisor, connection: Connection, idle: float
    ) -> None:
        """Close ``connection`` once nobody called its server for ``idle`` seconds (a
        server with a resource subscription is in use)."""
        while True:
            wait = supervisor.last_call + idle - anyio.current_time()
            with anyio.move_on_after(max(wait, 0.01)):
                await supervisor.stopped.wait()
                return
            if supervisor.connection is not connection or connection.state is not ServerState.READY:
                return  # replaced (a restart) or dead: its own path handles it
            in_use = supervisor.busy or connection.feed.subscriptions
            if in_use or anyio.current_time() - supervisor.last_call < idle:
                if in_use:
                    supervisor.last_call = anyio.current_time()
                continue
            supervisor.sleep()
            logger.info("server %r was idle for %g s; stopping it", supervisor.server, idle)
            await connection.aclose()
            return

    async def subscribe_again(self, supervisor: Supervisor, uris: set[str]) -> None:
        """Subscribe a restarted server's new connection to what its old one was."""
        for raw in sorted(uris):
            uri = registry_uri(supervisor.server, raw, prefix=supervisor.spec.prefix)
            try:
                await self.subscription(uri, True, None)
            except RegistryError as exc:
                logger.warning(
                    "server %r: %s was not subscribed again: %s", supervisor.server, uri, exc
                )

    # -- routing ------------------------------------------------------------------------------

    async def subscription(self, uri: str, on: bool, timeout: float | None) -> None:
        """Ask the server of ``uri`` for its updates (``on``) or to stop them.

        Raises:
            UnknownResourceError: ``uri`` is not a registry URI of a mounted server.
            NotSupportedError: The server does not support subscriptions; nothing was sent.
            UpstreamError, ServerNotRunningError, CallTimeoutError, ServerCrashedError: As
                for a call.
        """
        server, raw = self.route(uri)
        published = self.library.of(server)
        if published is None or not published.subscribe:
            raise NotSupportedError(server, uri, "resource subscriptions", kind="resource")
        supervisor = self.supervisors[server]
        seconds = self.timeout(supervisor, timeout)
        if supervisor.dormant:  # a subscription is a use: start it (idle does not stop it)
            self.wake(supervisor)
        began = anyio.current_time()
        with anyio.move_on_after(seconds):
            await supervisor.ready.wait()
        remaining = max(seconds - (anyio.current_time() - began), 0.001)
        await set_subscription(supervisor.connection, raw, uri, on, remaining)

    # -- what the host asks of every server ---------------------------------------------------

    async def set_log_level(self, level: mcp_types.LoggingLevel, server: str | None) -> None:
        """See `Registry.set_log_level`."""
        if server is None:
            self._log_level = level
            servers = {s: v for s, v in self.supervisors.items() if s not in self._log_levels}
            starting = [c for c in self._starting if c.server not in self._log_levels]
        else:
            self._log_levels[server] = level
            servers = {s: v for s, v in self.supervisors.items() if s == server}
            starting = [c for c in self._starting if c.server == server]
        starting += [c for c in self.clients.connections() if c.server in servers]
        await each_connection(servers, starting, lambda a: a.set_log_level(level))

    async def roots_changed(self) -> None:
        """Tell every server (each client's session of it too) that the host's roots changed."""
        others = [*self._starting, *self.clients.connections()]
        await each_connection(self.supervisors, others, lambda a: a.roots_changed())


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
