"""The registry: many servers, each mounted all-or-nothing, behind one name table.

A server's tools, prompts and resources become visible in one synchronous block
(`Catalog.publish`, `Library.commit`), after its connection is up, its lists checked and
its names assigned; any failure before that reaps
the server and leaves the table exactly as it was. Calls are routed through the table,
never by parsing names. A server that dies is handed to its `Supervisor`, which may
start it again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT

from mcpmount.catalog import Catalog, Library, Pins, rewrite_call
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import MountError, RegistryError, ServerError, ServerStartError
from mcpmount.handlers import Approver, ClientHandlers
from mcpmount.registry._approval import needs_approval, seek_approval, warn_unmatched
from mcpmount.registry._calls import call_within, check_arguments
from mcpmount.registry._closer import Closer, close_all
from mcpmount.registry._library import LibraryMethods
from mcpmount.registry._manifests import ManifestStore
from mcpmount.registry._mounting import check_namespaces, each_connection, mount_concurrently
from mcpmount.registry._observers import Observers
from mcpmount.registry._reading import ReadingMethods
from mcpmount.registry._reload import ReloadMethods
from mcpmount.registry._starting import Starter
from mcpmount.registry._status import CallStats, MountOutcome, notes_of
from mcpmount.registry._view import View
from mcpmount.search import TOOL_SEARCH_NAME
from mcpmount.transports import Reaper
from mcpmount.upstream import Connection, SchemaVetting, ServerContent, ServerState, Supervisor

__all__ = ["Registry"]

logger = logging.getLogger(__name__)


class Registry(LibraryMethods, ReadingMethods, ReloadMethods):
    """Mounted servers and their tools (prompts, resources) under one namespaced name table.

    Enter it (``async with Registry(settings) as registry``) from the task that will also
    leave it; mount, call and close from any task. Leaving it closes every server
    concurrently, even when the body raised or was cancelled.

    Args:
        settings: Names, timeouts and limits; defaults (and ``MCPMOUNT_*``) if omitted.
        pins: Pinned tool hashes from a lock file. With pins, a server whose definitions
            differ is handled by its ``on_change`` policy, at mount and at every re-list.
        handlers: The host's answers to what servers ask, and its log handler.
        approver: Decides the calls that an approval gate holds (``approve``, ``approval``).
        store: Cached manifests (``start = "background" | "lazy"``); default: the Redis
            of ``cache``, else ``cache_dir``.
        refresh_cache: Mount every server from its live lists and write its cache entry.
    """

    def __init__(
        self,
        settings: RegistrySettings | None = None,
        *,
        pins: Pins | None = None,
        handlers: ClientHandlers | None = None,
        approver: Approver | None = None,
        store: ManifestStore | None = None,
        refresh_cache: bool = False,
    ) -> None:
        self.settings = settings if settings is not None else RegistrySettings()
        self.pins = pins
        self.handlers = handlers
        self.approver = approver
        self.observers = Observers()
        """Told of every call and ``tool_search`` (for metrics; see `Observers`)."""
        self._log_level: mcp_types.LoggingLevel | None = None
        self._log_levels: dict[str, mcp_types.LoggingLevel] = {}
        """Servers asked for a level of their own (`set_log_level` with ``server``)."""
        self._catalog = Catalog(self.settings, pins)
        self._library = Library(self.settings, pins)
        self._servers: dict[str, Supervisor] = {}
        self._stats: dict[str, CallStats] = {}
        self._mounting: set[str] = set()
        self._starting: set[Connection] = set()
        self._failures: dict[str, ServerError] = {}
        self._reaper = Reaper()
        """Ends every stdio server's process group if this process dies without closing."""
        self._schemas = SchemaVetting()
        """Verdicts on the tool schemas its servers listed: each distinct one checked once."""
        self._starts = Starter(self, store, refresh=refresh_cache)
        self._tg: TaskGroup | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"<Registry servers={len(self._servers)} tools={len(self._catalog)}>"

    async def __aenter__(self) -> Registry:
        if self._exit_stack is not None or self._closed:
            raise RuntimeError("a Registry can be entered only once")
        async with contextlib.AsyncExitStack() as stack:
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            self._exit_stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
        assert self._exit_stack is not None
        await self._exit_stack.__aexit__(None, None, None)

    # -- mounting -----------------------------------------------------------------------------

    async def mount(self, server: str, spec: ServerSpec) -> Closer:
        """Mount one server: all of its tools, or none of them.

        Returns:
            The closer that unmounts it.

        Raises:
            ServerStartError: It could not be spawned, connected, handshaken or listed in
                time; its transport was reaped first.
            ToolListError: Its tool list broke a rule or a limit, or (with pins) differs
                from the lock file under ``on_change = "refuse"``; it was reaped first.
            NameCollisionError: One of its public names is taken; it was reaped first.
        """
        check_namespaces([server])
        if server in self._servers or server in self._mounting:
            raise ServerStartError(server, "a server with this namespace is already mounted")
        self._mounting.add(server)
        try:
            supervisor = await self._starts.mount(server, spec)  # from its cache, or live
        finally:
            self._mounting.discard(server)
        self._failures.pop(server, None)
        logger.info("mounted server %r with %d tools", server, len(supervisor.connection.tools))
        if supervisor.connection.state is ServerState.FAILED:  # it died before it was committed
            self._lost(supervisor.connection)
        return Closer(self, supervisor)

    async def _connect(self, server: str, spec: ServerSpec) -> Connection:
        """Start one connection in the registry's task group and wait until it is ready."""
        connection = Connection(
            server,
            spec,
            self.settings,
            on_lost=self._lost,
            on_tools=self._relisted,
            handlers=self.handlers,
            on_updated=self._updated,
            log_level=self._log_levels.get(server) or self._log_level,
            reaper=self._reaper,
            schemas=self._schemas,
        )
        # While it starts, closing the registry, or its server, cuts the start short.
        self._starting.add(connection)
        try:
            await self._task_group().start(connection.run)
        finally:
            self._starting.discard(connection)
        return connection

    async def _publish_or_close(
        self, supervisor: Supervisor, connection: Connection, *, first: bool
    ) -> None:
        """Publish ``connection``'s tools for ``supervisor``; on refusal close it and raise."""
        try:
            self._publish(supervisor, connection.tools, connection.content, first=first)
        except RegistryError:
            await connection.aclose()
            raise

    def _publish(
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
        commit = self._stage_content(supervisor, content)  # raises, or changes nothing
        self._catalog.publish(server, supervisor.spec, tools, first=first)
        self._compute_vectors()
        commit()
        warn_unmatched(server, supervisor.spec, tools)
        self._servers[server] = supervisor
        if first:
            self._stats[server] = CallStats()

    async def mount_all(self, servers: Mapping[str, ServerSpec], *, fail_fast: bool = True) -> None:
        """Mount ``servers`` concurrently; startup takes about as long as the slowest one.

        A failing server with ``required = false`` is skipped and kept in ``failures``.
        If a required one fails, every server this call mounted is closed and one
        ``MountError`` lists each failure. With ``fail_fast`` the other mounts are
        cancelled as soon as a required server fails.

        Raises:
            ConfigError: A namespace is invalid; nothing was started.
            MountError: One or more required servers failed.
        """
        check_namespaces(servers)
        outcomes = await mount_concurrently(self._mount_outcome, servers, fail_fast=fail_fast)
        failures = {o.server: o.error for o in outcomes if o.error is not None}
        if any(servers[server].required for server in failures):
            mounted = [self._servers.get(o.server) for o in outcomes if o.error is None]
            await close_all([Closer(self, s) for s in mounted if s is not None])
            raise MountError(failures)
        for server, exc in failures.items():
            logger.warning("optional server %r was skipped: %s", server, exc.detail)
        self._failures.update(failures)

    async def mount_each(
        self,
        servers: Mapping[str, ServerSpec],
        *,
        on_outcome: Callable[[MountOutcome], None] | None = None,
    ) -> list[MountOutcome]:
        """Mount ``servers`` concurrently, whatever fails: one outcome per server, in order.

        Unlike `mount_all` this never raises for a server's failure, required or not (for
        a report such as ``mcpmount check``); each failure is also kept in ``failures``.

        Args:
            servers: Namespace to spec.
            on_outcome: Called as each server's mount ends, for progress.

        Raises:
            ConfigError: A namespace is invalid; nothing was started.
        """
        check_namespaces(servers)
        outcomes = await mount_concurrently(
            self._mount_outcome, servers, fail_fast=False, on_outcome=on_outcome
        )
        self._failures.update({o.server: o.error for o in outcomes if o.error is not None})
        by_server = {o.server: o for o in outcomes}
        return [by_server[server] for server in servers]

    async def _mount_outcome(self, server: str, spec: ServerSpec) -> MountOutcome:
        """Mount one server; say how it went instead of raising."""
        began = anyio.current_time()
        try:
            await self.mount(server, spec)
        except ServerError as exc:
            return MountOutcome(server, spec, anyio.current_time() - began, error=exc)
        tools = self._catalog.of(server)
        supervisor = self._servers[server]
        seconds = supervisor.connection.startup_seconds or anyio.current_time() - began
        deferred = sum(e.deferred for e in tools)
        notes = notes_of(supervisor, tools)
        return MountOutcome(server, spec, seconds, len(tools), deferred, notes=notes)

    async def unmount(self, server: str) -> None:
        """Close one server and drop its tools; does nothing if it is not mounted."""
        supervisor = self._servers.get(server)
        if supervisor is not None:
            await Closer(self, supervisor)()

    async def aclose(self) -> None:
        """Close every server concurrently. Idempotent; never raises."""
        self._closed = True
        for supervisor in self._servers.values():  # before any await: no restart may begin
            supervisor.close()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in list(self._starting):
                    tg.start_soon(connection.aclose)
                closers = [Closer(self, s) for s in list(self._servers.values())]
                tg.start_soon(close_all, closers)
            await self._reaper.aclose()
            await self._starts.aclose()

    def _connections_of(self, supervisor: Supervisor) -> list[Connection]:
        """A server's connections to close: its current one and a restart's that starts."""
        starting = [c for c in self._starting if c.server == supervisor.server]
        return [supervisor.connection, *starting]

    def _forget(self, supervisor: Supervisor) -> None:
        """Drop a server's names, synchronously; a no-op if it is already gone."""
        if self._servers.get(supervisor.server) is not supervisor:
            return
        del self._servers[supervisor.server]
        del self._stats[supervisor.server]
        self._catalog.forget(supervisor.server)
        self._library.forget(supervisor.server)
        self._compute_vectors()

    def _compute_vectors(self) -> None:
        """semantic_model: compute waiting tool vectors (and crowding) off the loop."""
        if self._catalog.vectors_pending and not self._closed:
            self._task_group().start_soon(self._catalog.compute_vectors)

    # -- what upstream connections report -----------------------------------------------------

    def _relisted(
        self, connection: Connection, tools: list[mcp_types.Tool], content: ServerContent
    ) -> None:
        """Apply re-listed lists (the server said one changed); raise to keep the old."""
        supervisor = self._servers.get(connection.server)
        if supervisor is None or supervisor.connection is not connection:
            return
        try:
            self._publish(supervisor, tools, content, first=False)
        except RegistryError as exc:
            supervisor.error = str(exc)
            raise
        supervisor.error = None

    def _lost(self, connection: Connection) -> None:
        """A ready server died by itself. Its names stay: calls get "not running (why)"."""
        supervisor = self._servers.get(connection.server)
        if supervisor is None or self._closed or not supervisor.lost(connection):
            return
        self._task_group().start_soon(self._restart, supervisor)

    async def _restart(self, supervisor: Supervisor) -> None:
        async def start() -> Connection:
            connection = await self._connect(supervisor.server, supervisor.spec)
            await self._publish_or_close(supervisor, connection, first=False)
            return connection

        subscribed = set(supervisor.connection.feed.subscriptions)
        connection = await supervisor.restart(start)
        if connection is not None and connection.state is ServerState.FAILED:
            self._lost(connection)  # it died before it was committed
        elif connection is not None:
            await self._subscribe_again(supervisor, subscribed)

    async def set_log_level(
        self, level: mcp_types.LoggingLevel, *, server: str | None = None
    ) -> None:
        """Ask every server (also later ones) for log messages at ``level`` and up; with
        ``server``, ask that one only (its level then stays its own, across restarts)."""
        if server is None:
            self._log_level = level
            servers = {s: v for s, v in self._servers.items() if s not in self._log_levels}
            starting = [c for c in self._starting if c.server not in self._log_levels]
        else:
            self._log_levels[server] = level
            servers = {s: v for s, v in self._servers.items() if s == server}
            starting = [c for c in self._starting if c.server == server]
        await each_connection(servers, starting, lambda a: a.set_log_level(level))

    async def roots_changed(self) -> None:
        """Tell every server that the host's roots changed (only with a roots handler)."""
        await each_connection(self._servers, self._starting, lambda a: a.roots_changed())

    def _task_group(self) -> TaskGroup:
        if self._tg is None or self._closed:
            raise RuntimeError("the registry is not open; use `async with Registry(...)`")
        return self._tg

    def view(self) -> View:
        """Return a new conversation view; it remembers the tools its searches found."""
        return View(self)

    # -- calls --------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
        context: object | None = None,
    ) -> mcp_types.CallToolResult:
        """Call a mounted tool (or ``tool_search``) and return its result.

        A tool that reports ``isError`` is a result, not an exception: the model must see it.
        Resource URIs in its content come back as registry URIs (`read_resource` reads them).

        Args:
            name: The public name, e.g. ``"fs__read_file"``.
            arguments: The tool's arguments.
            timeout: Seconds to wait; default: the server's, else the registry's call_timeout.
            progress: Called with (progress, total, message) as the server reports progress.
            context: Anything; what the server asks meanwhile comes with it (`Asker`).

        Raises:
            UnknownToolError: No tool has that name.
            ServerNotRunningError: Its server crashed or was closed.
            CallTimeoutError: No answer in time; the outcome is unknown.
            ServerCrashedError: The server died during the call.
            UpstreamError: The server answered with a JSON-RPC error.
            ResultTooLargeError: The result is over ``max_result_bytes``.
            CallDeniedError: An approval gate denied it; nothing was sent.
        """
        if name == TOOL_SEARCH_NAME:
            return (await self.run_tool_search(arguments)).result
        if timeout is not None and not timeout > 0:  # NaN too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        entry = self._catalog.get(name)
        check_arguments(entry.server, name, arguments)
        supervisor = self._servers[entry.server]
        if needs_approval(entry, supervisor.spec, self.settings.approval):
            arguments = await seek_approval(self.approver, entry, arguments, context)
        timeout = self._timeout(supervisor, timeout)  # the same default as prompts and reads
        began = anyio.current_time()
        result = await call_within(
            supervisor, entry, arguments, timeout, progress, context, self._starts, self.observers
        )
        if (stats := self._stats.get(entry.server)) is not None:
            stats.record(anyio.current_time() - began)
        return rewrite_call(entry.server, result)
