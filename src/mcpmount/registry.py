"""The registry: one name table over many servers, each mounted all-or-nothing.

A server's tools become visible in one synchronous block, after its connection is up,
its list checked and its names assigned; any failure before that reaps the server and
leaves the table exactly as it was. Calls are routed through the table, never by
parsing names.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import os
from collections import deque
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT

from mcpmount import naming
from mcpmount.config import RegistryConfig, RegistrySettings, ServerSpec, load_config
from mcpmount.errors import (
    ConfigError,
    DefinitionChangedError,
    MountError,
    NameCollisionError,
    RegistryError,
    ServerError,
    ServerNotRunningError,
    ServerStartError,
    ToolListError,
    UnknownToolError,
)
from mcpmount.pins import Pins, diff_tools, lock_path, tool_hash
from mcpmount.search import TOOL_SEARCH_NAME, SearchIndex, SearchResult, tool_search_definition
from mcpmount.tool import MountedTool
from mcpmount.upstream import Connection, ServerState

__all__ = [
    "Closer",
    "Registry",
    "RegistryChange",
    "ServerStatus",
    "View",
    "open_registry",
    "read_pins",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One server's row in ``Registry.status()``."""

    server: str
    transport: str
    """``"stdio"`` or ``"http"``."""
    state: ServerState
    tools: int
    """Tools registered (visible and deferred)."""
    deferred: int
    required: bool
    pid: int | None = None
    startup_seconds: float | None = None
    restarts: int = 0
    """How many times the server was started again after dying."""
    calls: int = 0
    """Calls answered (results, including tool errors) since it was mounted."""
    p50_ms: float | None = None
    """Median latency of the last answered calls, in milliseconds."""
    error: str | None = None
    """Why it failed, or why its last restart or tool-list change was not applied."""


@dataclass(frozen=True, slots=True)
class RegistryChange:
    """What one change did to the name table; listeners get one per change."""

    server: str
    added: tuple[str, ...] = ()
    """Public names that appeared."""
    removed: tuple[str, ...] = ()
    """Public names that disappeared."""
    changed: tuple[str, ...] = ()
    """Public names whose definition changed."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


Listener = Callable[[RegistryChange], None]

_RESTART_BACKOFF = 0.5
"""Seconds before the first restart attempt; each attempt doubles it (`_Mounted.backoff`)."""

_RESTART_BACKOFF_CAP = 30.0
_RESTART_STABLE = 60.0
"""Seconds a restarted server must stay up before its backoff starts over."""
_RESTART_ATTEMPTS = 10
"""Consecutive failed restarts after which a server is left failed."""

_LATENCY_WINDOW = 256


@dataclass(eq=False)
class _Mounted:
    """One mounted server across its connections: the first, and any restarts."""

    server: str
    spec: ServerSpec
    connection: Connection
    restarts: int = 0
    restarting: bool = False
    closing: bool = False
    error: str | None = None
    ready: anyio.Event = field(default_factory=anyio.Event)
    """Set unless a restart is under way (a fresh, unset one is put in while it runs);
    calls that arrive during a restart wait on it."""
    stopped: anyio.Event = field(default_factory=anyio.Event)
    pending: Connection | None = None
    """A restart's connection that is still starting."""
    latencies: deque[float] = field(default_factory=lambda: deque[float](maxlen=_LATENCY_WINDOW))
    backoff: float = _RESTART_BACKOFF
    """The wait before the next restart attempt; doubles per attempt, up to the cap."""
    up_since: float = field(default_factory=anyio.current_time)
    """When the current connection came up (event-loop clock)."""
    calls: int = 0

    @property
    def state(self) -> ServerState:
        if self.closing:
            return ServerState.CLOSED
        if self.restarting:
            return ServerState.RESTARTING
        return self.connection.state


class Closer:
    """Unmounts one server. Idempotent, callable from any task, never raises, bounded."""

    __slots__ = ("_mounted", "_registry")

    def __init__(self, registry: Registry, mounted: _Mounted) -> None:
        self._registry = registry
        self._mounted = mounted

    @property
    def server(self) -> str:
        """The namespace of the server this closes."""
        return self._mounted.server

    async def __call__(self) -> None:
        mounted = self._mounted
        mounted.closing = True
        mounted.stopped.set()
        mounted.ready.set()  # calls waiting out a restart stop waiting
        self._registry._forget(mounted)  # pyright: ignore[reportPrivateUsage]
        connections = [mounted.connection, *([mounted.pending] if mounted.pending else [])]
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in connections:
                    tg.start_soon(connection.aclose)


class Registry:
    """Mounted servers and their tools under one flat, namespaced name table.

    Enter it (``async with Registry(settings) as registry``) from the task that will also
    leave it; mount, call and close from any task. Leaving it closes every server
    concurrently, even when the body raised or was cancelled.

    Args:
        settings: Names, timeouts and limits; defaults (and ``MCPMOUNT_*``) if omitted.
        pins: Pinned tool hashes from a lock file. With pins, a server whose definitions
            differ is handled by its ``on_change`` policy, at mount and at every re-list.
    """

    def __init__(
        self, settings: RegistrySettings | None = None, *, pins: Pins | None = None
    ) -> None:
        self.settings = settings if settings is not None else RegistrySettings()
        self.pins = pins
        self._tools: dict[str, MountedTool] = {}
        self._servers: dict[str, _Mounted] = {}
        self._mounting: set[str] = set()
        self._starting: set[Connection] = set()
        self._failures: dict[str, ServerError] = {}
        self._index = SearchIndex()
        self._manifest: list[mcp_types.Tool] | None = None
        self._listeners: list[Listener] = []
        self._tg: TaskGroup | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"<Registry servers={len(self._servers)} tools={len(self._tools)}>"

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

    # -- mounting ---------------------------------------------------------------------------

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
        if (problem := naming.namespace_problem(server)) is not None:
            raise ConfigError("<mount>", [f"servers.{server}: {problem}"])
        if server in self._servers or server in self._mounting:
            raise ServerStartError(server, "a server with this namespace is already mounted")
        self._mounting.add(server)
        try:
            connection = await self._connect(server, spec)
            try:
                mounted = _Mounted(server, spec, connection)
                self._apply(mounted, connection.tools, first=True)
            except RegistryError:
                await connection.aclose()
                raise
        finally:
            self._mounting.discard(server)
        mounted.ready.set()
        self._failures.pop(server, None)
        logger.info("mounted server %r with %d tools", server, len(connection.tools))
        if connection.state is ServerState.FAILED:  # it died before it was committed
            self._lost(connection)
        return Closer(self, mounted)

    async def _connect(
        self, server: str, spec: ServerSpec, restarting: _Mounted | None = None
    ) -> Connection:
        """Start one connection in the registry's task group and wait until it is ready."""
        connection = Connection(
            server, spec, self.settings, on_lost=self._lost, on_tools=self._relisted
        )
        if restarting is not None:
            restarting.pending = connection  # so that closing the server closes this too
        self._starting.add(connection)  # so that closing the registry cuts the start short
        try:
            await self._task_group().start(connection.run)
        finally:
            self._starting.discard(connection)
        return connection

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
        bad = [
            f"servers.{server}: {problem}"
            for server in servers
            if (problem := naming.namespace_problem(server)) is not None
        ]
        if bad:
            raise ConfigError("<mount>", bad)
        failures: dict[str, ServerError] = {}
        closers: list[Closer] = []
        async with anyio.create_task_group() as tg:

            async def mount_one(server: str, spec: ServerSpec) -> None:
                try:
                    closers.append(await self.mount(server, spec))
                except ServerError as exc:
                    failures[server] = exc
                    if spec.required and fail_fast:
                        tg.cancel_scope.cancel()

            for server, spec in servers.items():
                tg.start_soon(mount_one, server, spec)
        if any(servers[server].required for server in failures):
            await _close_all(closers)
            raise MountError(failures)
        for server, exc in failures.items():
            logger.warning("optional server %r was skipped: %s", server, exc.detail)
        self._failures.update(failures)

    async def unmount(self, server: str) -> None:
        """Close one server and drop its tools; does nothing if it is not mounted."""
        mounted = self._servers.get(server)
        if mounted is not None:
            await Closer(self, mounted)()

    async def aclose(self) -> None:
        """Close every server concurrently. Idempotent; never raises."""
        self._closed = True
        for mounted in self._servers.values():  # before any await: no restart may begin now
            mounted.closing = True
            mounted.stopped.set()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in list(self._starting):
                    tg.start_soon(connection.aclose)
                tg.start_soon(_close_all, [Closer(self, m) for m in list(self._servers.values())])

    def _apply(self, mounted: _Mounted, tools: list[mcp_types.Tool], *, first: bool) -> None:
        """Publish a server's (new) tool list; synchronous, so nothing interleaves.

        Raises:
            ServerStartError: The registry or the server is closing.
            ToolListError: Two of its tools get the same public name.
            NameCollisionError: A name is taken by another server; nothing was published.
            DefinitionChangedError: The list differs from the pins and the policy refuses.
        """
        server, spec = mounted.server, mounted.spec
        if self._closed or mounted.closing:
            raise ServerStartError(server, "the registry or the server is closing")
        try:
            names = naming.assign(
                server, [tool.name for tool in tools], self.settings.max_name_length
            )
        except ValueError as exc:
            raise ToolListError(server, str(exc)) from None
        for name, raw in names.items():
            other = self._tools.get(name)
            if other is not None and other.server != server:
                raise NameCollisionError(server, raw, name, other.server, other.raw_name)
        old = {e.raw_name: e for e in self._tools.values() if e.server == server}
        self._check_pins(mounted, tools, {raw: e.definition for raw, e in old.items()})
        by_raw = {raw: name for name, raw in names.items()}
        entries = [
            MountedTool(
                name=by_raw[tool.name],
                server=server,
                raw_name=tool.name,
                definition=tool,
                deferred=spec.is_deferred(tool.name, self.settings.defer_all),
                annotations_trusted=spec.trust_annotations,
            )
            for tool in tools
        ]
        diff = diff_tools({raw: tool_hash(e.definition) for raw, e in old.items()}, tools)
        if not first and not diff:
            return
        for entry in old.values():
            del self._tools[entry.name]
        for entry in entries:
            self._tools[entry.name] = entry
        self._servers[server] = mounted
        self._index.remove(e.name for e in old.values())
        self._index.add(entries)
        change = RegistryChange(
            server,
            added=tuple(by_raw[raw] for raw in diff.added),
            removed=tuple(old[raw].name for raw in diff.removed),
            changed=tuple(by_raw[raw] for raw in diff.changed),
        )
        if not first:
            logger.info("server %r changed its tools: %s", server, diff.summary())
        self._changed(change)

    def _check_pins(
        self,
        mounted: _Mounted,
        tools: list[mcp_types.Tool],
        old: Mapping[str, mcp_types.Tool],
    ) -> None:
        """Hold a tool list against the lock file's pins, per the server's ``on_change``."""
        if self.pins is None or mounted.spec.on_change == "accept":
            return
        pinned = self.pins.servers.get(mounted.server, {})
        diff = diff_tools(pinned, tools, old)
        if not diff:
            return
        if mounted.spec.on_change == "refuse":
            raise DefinitionChangedError(mounted.server, diff.summary(), diff.details)
        logger.warning(
            "server %r: tools differ from the lock file (%s); accepted because on_change = "
            '"warn"\n%s',
            mounted.server,
            diff.summary(),
            diff.details,
        )

    def _relisted(self, connection: Connection, tools: list[mcp_types.Tool]) -> None:
        """Apply a re-listed tool list (the server said it changed); raise to keep the old."""
        mounted = self._servers.get(connection.server)
        if mounted is None or mounted.connection is not connection:
            return
        try:
            self._apply(mounted, tools, first=False)
        except RegistryError as exc:
            mounted.error = str(exc)
            raise
        mounted.error = None

    def _forget(self, mounted: _Mounted) -> None:
        """Drop a server's names, synchronously; a no-op if it is already gone."""
        if self._servers.get(mounted.server) is not mounted:
            return
        del self._servers[mounted.server]
        names = [name for name, entry in self._tools.items() if entry.server == mounted.server]
        for name in names:
            del self._tools[name]
        self._index.remove(names)
        self._changed(RegistryChange(mounted.server, removed=tuple(names)))

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every change of the name table; returns the unsubscriber.

        Listeners run synchronously, right after the change: keep them short (set an event,
        put on a queue). One that raises is logged and kept.
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def _changed(self, change: RegistryChange) -> None:
        self._manifest = None
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                logger.exception(
                    "a registry listener failed on a change of server %r", change.server
                )

    def _lost(self, connection: Connection) -> None:
        """A ready server died by itself. Its names stay: calls get "not running (why)"."""
        mounted = self._servers.get(connection.server)
        if mounted is None or mounted.connection is not connection or mounted.closing:
            return
        mounted.error = connection.error
        if mounted.spec.restart != "on-failure" or self._closed:
            return
        if anyio.current_time() - mounted.up_since > _RESTART_STABLE:
            mounted.backoff = _RESTART_BACKOFF  # it was healthy for a while: start over
        mounted.restarting = True
        mounted.ready = anyio.Event()
        self._task_group().start_soon(self._restart, mounted)

    async def _restart(self, mounted: _Mounted) -> None:
        """Start a died server again, with exponential backoff, up to a number of attempts.

        The backoff outlives one restart: a server that dies again soon after coming back
        (a crash loop) waits longer each time, up to the cap.
        """
        try:
            for attempt in range(1, _RESTART_ATTEMPTS + 1):
                with anyio.move_on_after(mounted.backoff):
                    await mounted.stopped.wait()
                if mounted.closing or self._closed:
                    return
                mounted.backoff = min(mounted.backoff * 2, _RESTART_BACKOFF_CAP)
                logger.info("restarting server %r (attempt %d)", mounted.server, attempt)
                try:
                    connection = await self._connect(mounted.server, mounted.spec, mounted)
                    try:
                        self._apply(mounted, connection.tools, first=False)
                    except RegistryError:
                        await connection.aclose()
                        raise
                except RegistryError as exc:
                    mounted.error = str(exc)
                    logger.warning("server %r did not restart: %s", mounted.server, exc)
                    continue
                finally:
                    mounted.pending = None
                mounted.connection = connection
                mounted.restarts += 1
                mounted.up_since = anyio.current_time()
                mounted.error = None
                logger.info("server %r restarted (%d restarts)", mounted.server, mounted.restarts)
                if connection.state is ServerState.FAILED:  # it died before it was committed
                    mounted.restarting = False
                    self._lost(connection)
                return
            logger.warning(
                "server %r stays failed after %d restart attempts",
                mounted.server,
                _RESTART_ATTEMPTS,
            )
        finally:
            mounted.restarting = False
            mounted.ready.set()

    def _task_group(self) -> TaskGroup:
        if self._tg is None or self._closed:
            raise RuntimeError("the registry is not open; use `async with Registry(...)`")
        return self._tg

    def lock(self) -> Pins:
        """Return the pins of every mounted tool (for ``mcpmount lock``)."""
        servers: dict[str, dict[str, str]] = {}
        for entry in self._tools.values():
            servers.setdefault(entry.server, {})[entry.raw_name] = tool_hash(entry.definition)
        return Pins(servers)

    # -- what the model sees ----------------------------------------------------------------

    def tools(self) -> list[mcp_types.Tool]:
        """Return the manifest: visible tools, plus ``tool_search`` if any tool is deferred."""
        if self._manifest is None:
            entries = sorted(self._tools.values(), key=lambda e: e.name)
            manifest = [entry.to_mcp() for entry in entries if not entry.deferred]
            if any(entry.deferred for entry in entries):
                manifest.append(tool_search_definition())
            self._manifest = manifest
        return list(self._manifest)

    def mounted_tools(self) -> list[MountedTool]:
        """Return every mounted tool, deferred ones included, sorted by name."""
        return sorted(self._tools.values(), key=lambda e: e.name)

    def get(self, name: str) -> MountedTool:
        """Return the mounted tool called ``name``.

        Raises:
            UnknownToolError: No tool has that name.
        """
        try:
            return self._tools[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._tools, n=3)
            raise UnknownToolError(name, close) from None

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank every mounted tool (deferred ones included) for ``query``."""
        return self._index.search(query, limit)

    def view(self) -> View:
        """Return a new conversation view; it remembers the tools its searches found."""
        return View(self)

    @property
    def failures(self) -> dict[str, ServerError]:
        """Optional servers that failed to mount, with their errors."""
        return dict(self._failures)

    def status(self) -> list[ServerStatus]:
        """Return one row per mounted server, sorted by namespace."""
        rows: list[ServerStatus] = []
        for server, mounted in self._servers.items():
            tools = [e for e in self._tools.values() if e.server == server]
            connection = mounted.connection
            latencies = sorted(mounted.latencies)
            rows.append(
                ServerStatus(
                    server=server,
                    transport=mounted.spec.transport,
                    state=mounted.state,
                    tools=len(tools),
                    deferred=sum(e.deferred for e in tools),
                    required=mounted.spec.required,
                    pid=connection.pid if connection.state is ServerState.READY else None,
                    startup_seconds=connection.startup_seconds,
                    restarts=mounted.restarts,
                    calls=mounted.calls,
                    p50_ms=latencies[len(latencies) // 2] * 1000 if latencies else None,
                    error=mounted.error or connection.error or connection.relist_error,
                )
            )
        return sorted(rows, key=lambda row: row.server)

    # -- calls ------------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
    ) -> mcp_types.CallToolResult:
        """Call a mounted tool (or ``tool_search``) and return its result.

        A tool that reports ``isError`` is a result, not an exception: the model must see it.

        Args:
            name: The public name, e.g. ``"fs__read_file"``.
            arguments: The tool's arguments.
            timeout: Seconds to wait; default: the server's, else the registry's call_timeout.
            progress: Called with (progress, total, message) as the server reports progress.

        Raises:
            UnknownToolError: No tool has that name.
            ServerNotRunningError: Its server crashed or was closed.
            CallTimeoutError: No answer in time; the outcome is unknown.
            ServerCrashedError: The server died during the call.
            UpstreamError: The server answered with a JSON-RPC error.
            ResultTooLargeError: The result is over ``max_result_bytes``.
        """
        if name == TOOL_SEARCH_NAME:
            return self._tool_search(arguments)[0]
        entry = self.get(name)
        mounted = self._servers[entry.server]
        if timeout is None:
            timeout = mounted.spec.call_timeout or self.settings.call_timeout
        began = anyio.current_time()
        if not mounted.ready.is_set():  # restarting: wait for it, within the call's timeout
            with anyio.move_on_after(timeout):
                await mounted.ready.wait()
        remaining = timeout - (anyio.current_time() - began)
        if mounted.restarting or remaining <= 0:
            raise ServerNotRunningError(
                entry.server, name, f"it is restarting and was not back within {timeout:g} s"
            )
        result = await mounted.connection.call(name, entry.raw_name, arguments, remaining, progress)
        mounted.calls += 1
        mounted.latencies.append(anyio.current_time() - began)
        return result

    def _tool_search(
        self, arguments: Mapping[str, Any] | None
    ) -> tuple[mcp_types.CallToolResult, list[str]]:
        args = dict(arguments or {})
        query = args.get("query")
        limit = args.get("limit", 5)
        if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool):
            text = 'tool_search takes {"query": string, "limit": integer (1-20, default 5)}'
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=text)], is_error=True
            ), []
        found = self._index.search(query, limit)
        tools = [hit.tool.to_dict() for hit in found.hits]
        payload: dict[str, Any] = {"tools": tools}
        if found.hint:
            payload["hint"] = found.hint
        text = json.dumps(payload, ensure_ascii=False)
        result = mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)],
            structured_content=payload,
        )
        return result, [hit.tool.name for hit in found.hits]


class View:
    """One conversation's view of a registry: its manifest grows with what it searched.

    A deferred tool that a ``tool_search`` of this view returned appears in this view's
    ``tools()`` from then on, so activation survives across turns. Every tool stays
    callable by name: search controls discovery, not access.
    """

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.activated: list[str] = []

    def tools(self) -> list[mcp_types.Tool]:
        """Return the registry's manifest plus the tools this view's searches found."""
        manifest = self.registry.tools()
        shown = {tool.name for tool in manifest}
        for name in self.activated:
            entry = self.registry._tools.get(name)  # pyright: ignore[reportPrivateUsage]
            if entry is not None and name not in shown:
                manifest.append(entry.to_mcp())
                shown.add(name)
        return manifest

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
    ) -> mcp_types.CallToolResult:
        """Call like ``Registry.call``; a ``tool_search`` also activates what it found."""
        if name == TOOL_SEARCH_NAME:
            result, found = self.registry._tool_search(arguments)  # pyright: ignore[reportPrivateUsage]
            self.activated += [n for n in found if n not in self.activated]
            return result
        return await self.registry.call(name, arguments, timeout=timeout, progress=progress)


@contextlib.asynccontextmanager
async def open_registry(
    config: RegistryConfig | str | os.PathLike[str],
    *,
    fail_fast: bool = True,
    use_lock: bool = True,
) -> AsyncGenerator[Registry]:
    """Mount every server of ``config`` concurrently; close them all on the way out.

    If a lock file lies beside the config file (``x.toml`` -> ``x.lock``, written by
    ``mcpmount lock``), its pins are held against every server's tools.

    Args:
        config: A loaded config, or the path of a TOML (or ``mcpServers`` JSON) file.
        fail_fast: Cancel the other mounts as soon as a required server fails.
        use_lock: Hold the tools against the lock file, if there is one.

    Raises:
        ConfigError: The config file (or its lock file) is invalid.
        MountError: A required server failed; every server started was closed first.
    """
    if not isinstance(config, RegistryConfig):
        config = load_config(config)
    pins = read_pins(config) if use_lock else None
    async with Registry(config.settings, pins=pins) as registry:
        await registry.mount_all(config.servers, fail_fast=fail_fast)
        yield registry


def read_pins(config: RegistryConfig) -> Pins | None:
    """Return the pins of the lock file beside ``config``'s file, if there is one.

    Raises:
        ConfigError: The lock file exists but cannot be read.
    """
    if config.path is None:
        return None
    path = lock_path(config.path)
    try:
        return Pins.read(path)
    except ValueError as exc:
        raise ConfigError(str(path), [str(exc)]) from None


async def _close_all(closers: list[Closer]) -> None:
    """Run closers concurrently; they never raise."""
    if not closers:
        return
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for closer in closers:
                tg.start_soon(closer)
