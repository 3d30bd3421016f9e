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
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT

from mcpmount import naming
from mcpmount.config import HttpServer, RegistryConfig, RegistrySettings, ServerSpec, load_config
from mcpmount.connection import Connection, ServerState
from mcpmount.errors import (
    ConfigError,
    MountError,
    NameCollisionError,
    RegistryError,
    ServerError,
    ServerStartError,
    UnknownToolError,
)
from mcpmount.search import TOOL_SEARCH_NAME, SearchIndex, SearchResult, tool_search_definition
from mcpmount.tool import MountedTool

__all__ = ["Closer", "Registry", "RegistryChange", "ServerStatus", "View", "open_registry"]

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
    error: str | None = None


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


Listener = Callable[[RegistryChange], None]


class Closer:
    """Unmounts one server. Idempotent, callable from any task, never raises, bounded."""

    __slots__ = ("_connection", "_registry")

    def __init__(self, registry: Registry, connection: Connection) -> None:
        self._registry = registry
        self._connection = connection

    @property
    def server(self) -> str:
        """The namespace of the server this closes."""
        return self._connection.server

    async def __call__(self) -> None:
        self._registry._forget(self._connection)  # pyright: ignore[reportPrivateUsage]
        await self._connection.aclose()


class Registry:
    """Mounted servers and their tools under one flat, namespaced name table.

    Enter it (``async with Registry(settings) as registry``) from the task that will also
    leave it; mount, call and close from any task. Leaving it closes every server
    concurrently, even when the body raised or was cancelled.
    """

    def __init__(self, settings: RegistrySettings | None = None) -> None:
        self.settings = settings if settings is not None else RegistrySettings()
        self._tools: dict[str, MountedTool] = {}
        self._connections: dict[str, Connection] = {}
        self._mounting: set[str] = set()
        self._failures: dict[str, ServerError] = {}
        self._index = SearchIndex()
        self._manifest: list[mcp_types.Tool] | None = None
        self._listeners: list[Listener] = []
        self._tg: TaskGroup | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"<Registry servers={len(self._connections)} tools={len(self._tools)}>"

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
            ToolListError: Its tool list broke a rule or a limit; it was reaped first.
            NameCollisionError: One of its public names is taken; it was reaped first.
        """
        tg = self._task_group()
        if (problem := naming.namespace_problem(server)) is not None:
            raise ConfigError("<mount>", [f"servers.{server}: {problem}"])
        if server in self._connections or server in self._mounting:
            raise ServerStartError(server, "a server with this namespace is already mounted")
        self._mounting.add(server)
        try:
            connection = Connection(server, spec, self.settings, on_lost=self._lost)
            await tg.start(connection.run)
            try:
                self._register(connection)
            except RegistryError:
                await connection.aclose()
                raise
        finally:
            self._mounting.discard(server)
        self._failures.pop(server, None)
        logger.info("mounted server %r with %d tools", server, len(connection.tools))
        return Closer(self, connection)

    async def mount_all(self, servers: Mapping[str, ServerSpec], *, fail_fast: bool = True) -> None:
        """Mount ``servers`` concurrently; startup takes about as long as the slowest one.

        A failing server with ``required = false`` is skipped and kept in ``failures``.
        If a required one fails, every server this call mounted is closed and one
        ``MountError`` lists each failure. With ``fail_fast`` the other mounts are
        cancelled as soon as a required server fails.

        Raises:
            MountError: One or more required servers failed.
        """
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
        connection = self._connections.get(server)
        if connection is not None:
            await Closer(self, connection)()

    async def aclose(self) -> None:
        """Close every server concurrently. Idempotent; never raises."""
        self._closed = True
        connections = list(self._connections.values())
        for connection in connections:
            self._forget(connection)
        await _close_all([Closer(self, c) for c in connections])

    def _register(self, connection: Connection) -> None:
        """Publish a started server's tools; synchronous, so nothing interleaves.

        Raises:
            NameCollisionError: A name is taken; nothing was published.
        """
        server = connection.server
        if self._closed:
            raise ServerStartError(server, "the registry is closed")
        raw_names = [tool.name for tool in connection.tools]
        try:
            names = naming.assign(server, raw_names, self.settings.max_name_length)
        except ValueError as exc:
            raise ServerStartError(server, str(exc)) from None
        by_raw = {raw: name for name, raw in names.items()}
        for name, raw in names.items():
            if (other := self._tools.get(name)) is not None:
                raise NameCollisionError(server, raw, name, other.server, other.raw_name)
        entries = [
            MountedTool(
                name=by_raw[tool.name],
                server=server,
                raw_name=tool.name,
                definition=tool,
                deferred=connection.spec.is_deferred(tool.name, self.settings.defer_all),
            )
            for tool in connection.tools
        ]
        for entry in entries:
            self._tools[entry.name] = entry
        self._connections[server] = connection
        self._index.add(entries)
        self._changed(RegistryChange(server, added=tuple(e.name for e in entries)))

    def _forget(self, connection: Connection) -> None:
        """Drop a server's names, synchronously; a no-op if it is already gone."""
        if self._connections.get(connection.server) is not connection:
            return
        del self._connections[connection.server]
        names = [name for name, entry in self._tools.items() if entry.server == connection.server]
        for name in names:
            del self._tools[name]
        self._index.remove(names)
        self._changed(RegistryChange(connection.server, removed=tuple(names)))

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
        # The names stay, so calls get "server not running (why)" instead of "unknown tool".
        logger.warning("server %r stopped: %s", connection.server, connection.error)

    def _task_group(self) -> TaskGroup:
        if self._tg is None or self._closed:
            raise RuntimeError("the registry is not open; use `async with Registry(...)`")
        return self._tg

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
        """Return one row per mounted or failed server, sorted by namespace."""
        rows: list[ServerStatus] = []
        for server, connection in self._connections.items():
            tools = [e for e in self._tools.values() if e.server == server]
            rows.append(
                ServerStatus(
                    server=server,
                    transport=_transport_name(connection.spec),
                    state=connection.state,
                    tools=len(tools),
                    deferred=sum(e.deferred for e in tools),
                    required=connection.spec.required,
                    pid=connection.pid,
                    startup_seconds=connection.startup_seconds,
                    error=connection.error,
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
        connection = self._connections[entry.server]
        if timeout is None:
            timeout = connection.spec.call_timeout or self.settings.call_timeout
        return await connection.call(name, entry.raw_name, arguments, timeout, progress)

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
    config: RegistryConfig | str | os.PathLike[str], *, fail_fast: bool = True
) -> AsyncGenerator[Registry]:
    """Mount every server of ``config`` concurrently; close them all on the way out.

    Args:
        config: A loaded config, or the path of a TOML (or ``mcpServers`` JSON) file.
        fail_fast: Cancel the other mounts as soon as a required server fails.

    Raises:
        ConfigError: The config file is invalid.
        MountError: A required server failed; every server started was closed first.
    """
    if not isinstance(config, RegistryConfig):
        config = load_config(config)
    async with Registry(config.settings) as registry:
        await registry.mount_all(config.servers, fail_fast=fail_fast)
        yield registry


async def _close_all(closers: list[Closer]) -> None:
    """Run closers concurrently; they never raise."""
    if not closers:
        return
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for closer in closers:
                tg.start_soon(closer)


def _transport_name(spec: ServerSpec) -> str:
    return "http" if isinstance(spec, HttpServer) else "stdio"
