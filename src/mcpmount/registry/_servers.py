"""The mounted servers: each one's supervisor and connections, from its mount to its close.

`Registry` owns one `Servers` and hands it to what needs the servers (starts, closers,
prompt and resource requests, reloads), each of which sees it through a small protocol.

A server's tools, prompts and resources become visible in one synchronous block
(`Servers.publish`: `Library.stage`, `Catalog.publish`, the library's commit), after its
connection is up, its lists checked and its names assigned; any failure before that reaps
the server and leaves the tables exactly as they were. A server that dies is handed to its
`Supervisor`, which may start it again; meanwhile its names stay, and calls get "not
running (why)".
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVarTuple

import anyio
import httpx2
import mcp_types
from anyio.abc import TaskGroup

from mcpmount.catalog import Catalog, Library, Pins, registry_uri, split_uri
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import (
    MountError,
    NotSupportedError,
    RegistryError,
    ServerError,
    ServerStartError,
    UnknownResourceError,
)
from mcpmount.gates import warn_unmatched
from mcpmount.handlers import ClientHandlers
from mcpmount.manifests import ManifestStore
from mcpmount.processes import Reaper
from mcpmount.registry._clients import Clients
from mcpmount.registry._mounting import check_namespaces, each_connection, mount_concurrently
from mcpmount.registry._starting import Starter
from mcpmount.registry._status import CallStats, MountOutcome, notes_of
from mcpmount.transports import transport_for
from mcpmount.upstream import (
    Connection,
    SchemaVetting,
    ServerContent,
    ServerState,
    Supervisor,
    set_subscription,
)

__all__ = ["Servers"]

logger = logging.getLogger(__name__)

Args = TypeVarTuple("Args")


class Servers:
    """The registry's servers by namespace, the task group they run in, and their lives.

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
        self.settings = settings
        """Names, timeouts and limits; a reload replaces them."""
        self.handlers = handlers
        """Given to each connection as it starts."""
        self.catalog = Catalog(settings, pins)
        """The tool table."""
        self.library = Library(settings, pins)
        """The prompt and resource tables."""
        self.supervisors: dict[str, Supervisor] = {}
        """Every mounted server (dormant, restarting and failed ones too)."""
        self.failures: dict[str, ServerError] = {}
        """Servers that failed to mount and were left out, with their errors."""
        self.stats: dict[str, CallStats] = {}
        self.generation = 0
        """Counts publishes and forgets (what is built from every server is stale if it grew)."""
        self.schemas = SchemaVetting()
        """Verdicts on the tool schemas its servers listed: each distinct one checked once."""
        self.on_task_status: Callable[[str, mcp_types.Task], None] | None = None
        """Told of each task status a server reports (`Tasks.notify`)."""
        self._pins = pins
        self._log_level: mcp_types.LoggingLevel | None = None
        self._log_levels: dict[str, mcp_types.LoggingLevel] = {}
        """Servers asked for a level of their own (`set_log_level` with ``server``)."""
        self._mounting: set[str] = set()
        self._starting: set[Connection] = set()
        self._reaper = Reaper()
        """Ends every stdio server's process group if this process dies without closing."""
        self._starts = Starter(self, self.schemas, store, refresh=refresh)
        self._tg: TaskGroup | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._closed = False
        self.clients = Clients(self.open_client, self.start_soon)
        """The connections of clients of ``per_client`` servers, by server and client."""

    @property
    def reaper(self) -> Reaper:
        """Ends every process group it watches if this process dies without closing."""
        return self._reaper

    @property
    def pins(self) -> Pins | None:
        """The lock file's pins the servers are held to (a reload may replace them)."""
        return self._pins

    @pins.setter
    def pins(self, pins: Pins | None) -> None:
        self._pins = self.catalog.pins = self.library.pins = pins

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

    def start_soon(
        self, task: Callable[[*Args], Coroutine[Any, Any, object]], *args: *Args
    ) -> None:
        """Run ``task`` in the servers' task group (the registry must be open)."""
        self._task_group().start_soon(task, *args)

    def _task_group(self) -> TaskGroup:
        if self._tg is None or self._closed:
            raise RuntimeError("the registry is not open; use `async with Registry(...)`")
        return self._tg

    # -- mounting -----------------------------------------------------------------------------

    async def mount(self, server: str, spec: ServerSpec) -> Supervisor:
        """Mount one server, all or nothing: from its cached manifest, or live."""
        check_namespaces([server])
        if server in self.supervisors or server in self._mounting:
            raise ServerStartError(server, "a server with this namespace is already mounted")
        self._mounting.add(server)
        try:
            supervisor = await self._starts.from_cache(server, spec)
            if supervisor is None:
                connection = await self._connect(server, spec)
                supervisor = Supervisor(server, spec, connection)
                await self._publish_or_close(supervisor, connection, first=True)
                supervisor.ready.set()
                await self._starts.remember(spec, connection)
        finally:
            self._mounting.discard(server)
        self.failures.pop(server, None)
        logger.info("mounted server %r with %d tools", server, len(supervisor.connection.tools))
        if supervisor.connection.state is ServerState.FAILED:  # it died before it was committed
            self.lost(supervisor.connection)
        return supervisor

    async def mount_all(self, servers: Mapping[str, ServerSpec], *, fail_fast: bool) -> None:
        """Mount ``servers`` concurrently; see `Registry.mount_all`."""
        check_namespaces(servers)
        outcomes = await mount_concurrently(self._outcome, servers, fail_fast=fail_fast)
        failures = {o.server: o.error for o in outcomes if o.error is not None}
        if any(servers[server].required for server in failures):
            mounted = [self.supervisors.get(o.server) for o in outcomes if o.error is None]
            await self.close_each([s for s in mounted if s is not None])
            raise MountError(failures)
        for server, exc in failures.items():
            logger.warning("optional server %r was skipped: %s", server, exc.detail)
        self.failures.update(failures)

    async def mount_each(
        self,
        servers: Mapping[str, ServerSpec],
        *,
        on_outcome: Callable[[MountOutcome], None] | None = None,
    ) -> list[MountOutcome]:
        """Mount ``servers`` concurrently, whatever fails; see `Registry.mount_each`."""
        check_namespaces(servers)
        outcomes = await mount_concurrently(
            self._outcome, servers, fail_fast=False, on_outcome=on_outcome
        )
        self.failures.update(  # but not one ``on_outcome`` mounted again meanwhile
            {o.server: o.error for o in outcomes if o.error and o.server not in self.supervisors}
        )
        by_server = {o.server: o for o in outcomes}
        return [by_server[server] for server in servers]

    async def _outcome(self, server: str, spec: ServerSpec) -> MountOutcome:
        """Mount one server; say how it went instead of raising."""
        began = anyio.current_time()
        try:
            supervisor = await self.mount(server, spec)
        except ServerError as exc:
            return MountOutcome(server, spec, anyio.current_time() - began, error=exc)
        tools = self.catalog.of(server)
        seconds = supervisor.connection.startup_seconds or anyio.current_time() - began
        deferred = sum(e.deferred for e in tools)
        notes = notes_of(supervisor, tools)
        return MountOutcome(server, spec, seconds, len(tools), deferred, notes=notes)

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

    def publish(
        self,
        supervisor: Supervisor,
        tools: list[mcp_types.Tool],
        content: ServerContent,
        *,
        first: bool,
    ) -> None:
        """Publish a server's (new) lists; synchronous, so nothing interleaves.

        Raises:
            ServerStartError: The registry or the server is closing.
            ToolListError, NameCollisionError, DefinitionChangedError: See `Catalog.publish`.
        """
        server = supervisor.server
        if self._closed or supervisor.closing:
            raise ServerStartError(server, "the registry or the server is closing")
        staged = self.library.stage(  # raises, or changes nothing
            server,
            supervisor.spec,
            content.prompts,
            content.resources,
            content.templates,
            subscribe=content.subscribe,
        )
        self.catalog.publish(server, supervisor.spec, tools, first=first)
        self._compute_vectors()
        self.library.commit(staged)
        warn_unmatched(server, supervisor.spec, tools)
        self.supervisors[server] = supervisor
        self.generation += 1
        if first:
            self.stats[server] = CallStats()

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
            await self._starts.aclose()

    def forget(self, supervisor: Supervisor) -> None:
        """Drop a server's names, synchronously; a no-op if it is already gone."""
        if self.supervisors.get(supervisor.server) is not supervisor:
            return
        del self.supervisors[supervisor.server]
        self.generation += 1
        del self.stats[supervisor.server]
        self.catalog.forget(supervisor.server)
        self.library.forget(supervisor.server)
        self._compute_vectors()

    def _compute_vectors(self) -> None:
        """semantic_model: compute waiting tool vectors (and crowding) off the loop."""
        if self.catalog.vectors_pending and not self._closed:
            self.start_soon(self.catalog.compute_vectors)

    # -- what upstream connections report -----------------------------------------------------

    def _relisted(
        self, connection: Connection, tools: list[mcp_types.Tool], content: ServerContent
    ) -> None:
        """Apply re-listed lists (the server said one changed); raise to keep the old."""
        supervisor = self.supervisors.get(connection.server)
        if supervisor is None or supervisor.connection is not connection:
            return
        try:
            self.publish(supervisor, tools, content, first=False)
        except RegistryError as exc:
            supervisor.error = str(exc)
            raise
        supervisor.error = None

    def _updated(self, connection: Connection, uri: str) -> None:
        """A server said a resource changed: tell the update listeners its registry URI."""
        supervisor = self.supervisors.get(connection.server)
        if supervisor is not None and supervisor.connection is connection:
            self.library.updated(
                registry_uri(connection.server, uri, prefix=supervisor.spec.prefix)
            )

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
        self._starts.wake(supervisor)

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

    def route(self, uri: str) -> tuple[str, str]:
        """Return the server and the server's own URI of a registry URI, or of a URI of a
        server that keeps its own (``prefix = false``, `Library.owner_of_uri`).

        Raises:
            UnknownResourceError: ``uri`` is neither.
        """
        if (owned := self.library.owner_of_uri(uri)) is not None:
            return owned
        server, raw = split_uri(uri)
        supervisor = self.supervisors.get(server)
        if supervisor is None or not supervisor.spec.prefix:
            raise UnknownResourceError(uri, f"no mounted server has the namespace {server!r}")
        return server, raw

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

    def timeout(self, supervisor: Supervisor, timeout: float | None) -> float:
        """Return the seconds a request may take: ``timeout``, else the server's call
        timeout, else the registry's."""
        if timeout is not None and not timeout > 0:  # NaN too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        return timeout or supervisor.connection.effective.call_timeout

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
