"""The registry: many servers, each mounted all-or-nothing, behind one name table.

`Registry` is the public face. It delegates to what it owns, each given the concrete
`Servers` (mounting, restarts, closing): `LibraryRequests`, `Tasks`, `Reloader`; a call
is `call_tool`, and mounting many servers `mount_all` and `mount_each`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace
from typing import Any

import mcp_types
from mcp.shared.dispatcher import ProgressFnT

from mcpmount.audit import ServerListing
from mcpmount.catalog import ChangeListener, Pins
from mcpmount.codemode import RUN_CODE_NAME, read_code
from mcpmount.config import RegistryConfig, RegistrySettings, ServerSpec
from mcpmount.errors import ServerError, UnknownToolError
from mcpmount.gates import Interception, guarded_handlers
from mcpmount.handlers import Approver, ClientHandlers, Interceptor
from mcpmount.manifests import ManifestStore
from mcpmount.observers import Observers
from mcpmount.registry._clients import Clients
from mcpmount.registry._closer import Closer
from mcpmount.registry._code import run_code_of, with_code_mode
from mcpmount.registry._lock import lock_pins
from mcpmount.registry._mounting import mount_all, mount_each
from mcpmount.registry._reload import KEEP_PINS, KeepPins, Reloader, ReloadResult
from mcpmount.registry._servers import Servers
from mcpmount.registry._status import MountOutcome, ServerStatus, listing_of, status_rows
from mcpmount.registry._view import View
from mcpmount.registry.requests import LibraryRequests, UpdateListener, call_tool, subscribe_all
from mcpmount.registry.tasks import Tasks
from mcpmount.search import TOOL_SEARCH_NAME, SearchResult, ToolSearchCall
from mcpmount.tool import MountedTool

__all__ = ["Registry"]


class Registry:
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
        interceptors: Hooks before and after every call, in order (see `intercept`).
        store: Cached lists (``start = "background" | "lazy"``); default: the Redis
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
        interceptors: Sequence[Interceptor] = (),
        store: ManifestStore | None = None,
        refresh_cache: bool = False,
    ) -> None:
        settings = settings if settings is not None else RegistrySettings()
        self.approver = approver
        self.observers = Observers()
        """Told of every call and ``tool_search`` (for metrics; see `Observers`)."""
        self._host_handlers = handlers
        guarded = guarded_handlers(handlers, lambda: self._interception.secrets)
        self._servers = Servers(settings, pins, guarded, store, refresh=refresh_cache)
        self._catalog, self._library = self._servers.catalog, self._servers.library
        self._interception = Interception(
            self._servers, interceptors, lambda: self.approver, self._servers.reaper
        )
        self._requests = LibraryRequests(self._servers, self._library, self._interception)
        self._reloader = Reloader(self._servers)
        self._tasks = Tasks(self._servers, self._catalog, self._interception)
        self._servers.on_task_status = self._tasks.notify

    @property
    def settings(self) -> RegistrySettings:
        """Names, timeouts and limits (`reload` replaces them)."""
        return self._servers.settings

    @property
    def pins(self) -> Pins | None:
        """The lock file's pins the servers are held to (`reload` may replace them)."""
        return self._servers.pins

    @property
    def tasks(self) -> Tasks:
        """Tools run as tasks: start one and come back for it, or relay ``tasks/*``
        (`Tasks`). `call` needs none of it: it waits for a task-only tool's result."""
        return self._tasks

    @property
    def handlers(self) -> ClientHandlers | None:
        """The host's answers to what servers ask, and its log handler."""
        return self._host_handlers

    def __repr__(self) -> str:
        return f"<Registry servers={len(self._servers.supervisors)} tools={len(self._catalog)}>"

    async def __aenter__(self) -> Registry:
        await self._servers.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._servers.__aexit__(*exc_info)

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
        return Closer(self._servers, await self._servers.mount(server, spec))

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
        await mount_all(self._servers, servers, fail_fast=fail_fast)

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
        return await mount_each(self._servers, servers, on_outcome=on_outcome)

    async def unmount(self, server: str) -> None:
        """Close one server and drop its tools; does nothing if it is not mounted."""
        await self._servers.unmount(server)

    async def aclose(self) -> None:
        """Close every server concurrently. Idempotent; never raises."""
        await self._servers.aclose()

    async def reload(
        self,
        config: RegistryConfig | str | os.PathLike[str],
        *,
        pins: Pins | KeepPins | None = KEEP_PINS,
    ) -> ReloadResult:
        """Make the mounted servers those of ``config``, touching only what changed.

        Unchanged servers keep running; removed ones close; added ones mount; changed
        ones (their spec, or a registry setting they read) close and mount again. A
        server whose new spec fails to mount is left out and reported, whether it is
        required or not: the others stay served. One reload runs at a time; call it once
        the first mounts are done.

        Args:
            config: The new config, or the path of its file (loaded as `load_config` does).
            pins: The lock file's pins as they are now (`read_pins`; None: no lock file):
                a server whose pins changed restarts and is held to the new ones.
                Omitted, the pins stay those the registry was opened with.

        Returns:
            What was added, removed, restarted, left unchanged and what failed.

        Raises:
            ConfigError: The file is missing or invalid; nothing was changed.
        """
        return await self._reloader.reload(config, pins=pins)

    async def set_log_level(
        self, level: mcp_types.LoggingLevel, *, server: str | None = None
    ) -> None:
        """Ask every server (also later ones) for log messages at ``level`` and up; with
        ``server``, ask that one only (its level then stays its own, across restarts)."""
        await self._servers.set_log_level(level, server)

    async def roots_changed(self) -> None:
        """Tell every server that the host's roots changed (only with a roots handler)."""
        await self._servers.roots_changed()

    def view(self) -> View:
        """Return a new conversation view; it remembers the tools its searches found."""
        return View(self)

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
                A `ClientKey` (or an object with one as ``client_key``) also says whose
                call it is: a ``per_client`` server runs it over that client's own
                session; without one it goes over the shared session.

        Raises:
            UnknownToolError: No tool has that name.
            ServerNotRunningError: Its server crashed or was closed.
            CallTimeoutError: No answer in time; the outcome is unknown.
            ServerCrashedError: The server died during the call.
            UpstreamError: The server answered with a JSON-RPC error.
            ResultTooLargeError: The result is over ``max_result_bytes``.
            CallDeniedError: An approval gate or an interceptor refused it (the secret
                guard's: ``SecretRefusedError``); nothing was sent.
            ResultWithheldError: The tool ran, but an interceptor failed on its result.
        """
        if name == TOOL_SEARCH_NAME:
            return (await self.run_tool_search(arguments)).result
        if name == RUN_CODE_NAME and self.settings.code_mode.enabled:
            code = read_code(arguments)
            return await self.run_code(code, context=context) if isinstance(code, str) else code
        if timeout is not None and not timeout > 0:  # NaN too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        entry = self._catalog.get(name)
        interception, observers = self._interception, self.observers
        return await call_tool(
            self._servers, entry, arguments, timeout, progress, context, interception, observers
        )

    async def run_code(
        self, source: str, *, context: object | None = None
    ) -> mcp_types.CallToolResult:
        """Run the Python program ``source`` in a fresh sandbox, with every tool a model may
        see importable (``from tools import fs``), and return what it printed.

        Each call it makes is a `call` with ``context``: the secret guard, approval and
        interceptors apply. ``[registry.code_mode]`` sets its limits; ``enabled`` says only
        whether models are offered ``run_code``. A failing program, and one stopped by a
        limit, is an error result; so is a run where no sandbox can be made (it says what
        to install; nothing runs unsandboxed).
        """
        return await run_code_of(self, source, context)

    def intercept(self, interceptor: Interceptor) -> Callable[[], None]:
        """Add hooks around every call, after those given (see `Interceptor`); returns
        what removes them."""
        return self._interception.add(interceptor)

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after every change of the tool, prompt or resource tables
        (`RegistryChange.kind` says which); returns the unsubscriber.

        Listeners run synchronously, right after the change: keep them short (set an event,
        put on a queue). One that raises is logged and kept.
        """
        return subscribe_all(self._catalog, self._library, listener)

    def prompts(self) -> list[mcp_types.Prompt]:
        """Return every mounted prompt under its public name (``<namespace>__<prompt>``)."""
        return self._interception.secrets.redact_listing(self._library.prompts())

    def resources(self) -> list[mcp_types.Resource]:
        """Return every mounted resource under its registry URI (``mcpmount://<ns>/<uri>``)."""
        return self._interception.secrets.redact_listing(self._library.resources())

    def resource_templates(self) -> list[mcp_types.ResourceTemplate]:
        """Return every resource template under its registry URI template."""
        return self._interception.secrets.redact_listing(self._library.templates())

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        context: object | None = None,
    ) -> mcp_types.GetPromptResult:
        """Get a mounted prompt by its public name; resource URIs in it are registry URIs.

        ``context`` is as for `Registry.call`: what the server asks while rendering the
        prompt reaches the handlers with it, and with the prompt's public name as
        `Asker.tool`.

        Raises:
            UnknownPromptError: No prompt has that name.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError:
                As for `Registry.call`, naming the prompt.
            ResultTooLargeError: As for `Registry.call`, naming the prompt.
        """
        return await self._requests.get_prompt(name, arguments, timeout, context)

    async def end_client(self, client: str) -> None:
        """Close the upstream sessions ``per_client`` servers keep for ``client`` (a
        `ClientKey`'s ``id``): it left. Its next request would open new ones."""
        await self._servers.clients.end(client)

    @property
    def clients(self) -> Clients:
        """The upstream sessions of clients of ``per_client`` servers; its
        ``connection_auth`` gives each client's HTTP session credentials of its own."""
        return self._servers.clients

    async def read_resource(
        self, uri: str, *, timeout: float | None = None, context: object | None = None
    ) -> mcp_types.ReadResourceResult:
        """Read a resource by its registry URI; ``contents[].uri`` come back as registry URIs.

        Any URI under a mounted server's prefix is read from that server, listed or not.
        ``context`` is as for `Registry.call`: what the server asks while reading reaches
        the handlers with it, and with the registry URI as `Asker.tool`.

        Raises:
            UnknownResourceError: ``uri`` is not a registry URI of a mounted server.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError:
                As for `Registry.call`, naming the URI.
            ResultTooLargeError: As for `Registry.call`, naming the URI.
        """
        return await self._requests.read_resource(uri, timeout, context)

    async def complete(
        self,
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        context: object | None = None,
    ) -> mcp_types.CompleteResult:
        """Ask the owning server to complete an argument of a prompt or resource template.

        Args:
            ref: A prompt by its public name, or a template by its registry URI template.
            argument: ``{"name": ..., "value": ...}``: the argument and what is typed so far.
            context_arguments: Arguments already given.
            context: Whose request it is (a `ClientKey`, or what carries one), for a
                ``per_client`` server; as for `Registry.call`.

        Raises:
            UnknownPromptError, UnknownResourceError: ``ref`` names nothing mounted.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError, UpstreamError:
                As for `Registry.call`.
        """
        return await self._requests.complete(ref, argument, context_arguments, timeout, context)

    async def subscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Ask the owning server for updates of ``uri``; they reach `subscribe_updates`.

        Raises:
            UnknownResourceError: ``uri`` is not a registry URI of a mounted server.
            NotSupportedError: The server does not support subscriptions; nothing was sent.
            UpstreamError: The server refused it.
            ServerNotRunningError, CallTimeoutError, ServerCrashedError: As for a call.
        """
        await self._requests.subscription(uri, True, timeout)

    async def unsubscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Stop the updates of ``uri`` that `subscribe_resource` asked for.

        Raises:
            RegistryError: What `subscribe_resource` raises.
        """
        await self._requests.subscription(uri, False, timeout)

    def subscribe_updates(self, listener: UpdateListener) -> Callable[[], None]:
        """Call ``listener`` with the registry URI of every resource a server says changed.

        Runs synchronously, like `Registry.subscribe`'s listeners: keep it short. Returns
        the unsubscriber.
        """
        return self._library.subscribe_updates(listener)

    def lock(self, previous: Pins | None = None) -> Pins:
        """Return the pins of every mounted tool, prompt and resource (for ``mcpmount lock``).

        Args:
            previous: The pins of the lock file being replaced: an optional server that
                failed to mount keeps the pins it had there, so a server that is down for a
                moment is not unpinned.
        """
        return lock_pins(self._catalog, self._library, self._servers.failures, previous)

    def tools(self) -> list[mcp_types.Tool]:
        """Return the manifest: listed tools, plus ``tool_search`` if any tool is deferred,
        and ``run_code`` (with ``tool_search``) where code mode is enabled and can run."""
        manifest = with_code_mode(self._catalog.manifest(), self)
        return self._interception.secrets.redact_listing(manifest)

    def mounted_tools(self) -> list[MountedTool]:
        """Return every mounted tool, deferred ones included, sorted by name."""
        return self._catalog.all()

    def get(self, name: str, *, servers: Container[str] | None = None) -> MountedTool:
        """Return the mounted tool called ``name``: its public name, or the name an app of
        one of ``servers`` (None: of any) calls it by (docs: MCP Apps).

        Raises:
            UnknownToolError: No tool has that name.
        """
        return self._catalog.get(name, servers=servers)

    def definition(self, name: str) -> mcp_types.Tool:
        """Return the definition of the tool called ``name`` as a model is shown it,
        deferred or not: under its public name, every known secret redacted (as `tools`).

        Raises:
            UnknownToolError: No tool has that name.
        """
        return self._interception.secrets.redact_model(self._catalog.get(name).to_mcp())

    def owner(self, kind: str, name: str) -> str | None:
        """The namespace a tool or prompt name, or a resource URI (``kind``), belongs to;
        None when it names nothing mounted."""
        if kind != "tool":
            return self._requests.owner(kind, name)
        try:
            return self._catalog.get(name).server
        except UnknownToolError:
            return None

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank every mounted tool (deferred ones included) for ``query``: by its words,
        and with a ``semantic_model`` by meaning too once `wait_search_ready` would return."""
        return self._catalog.search(query, limit)

    async def wait_search_ready(self, progress: Callable[[int], None] | None = None) -> None:
        """Return once `search` ranks by meaning too: every mounted tool's vector found in
        the vector cache or computed (in a worker thread). At once without a
        ``semantic_model``, or when it cannot load (logged once; search stays by words).

        Args:
            progress: Told how many tool texts still wait, before each batch of them.
        """
        await self._catalog.wait_vectors(progress)

    def tool_search(
        self,
        arguments: Mapping[str, Any] | None,
        *,
        servers: Container[str] | None = None,
        tools: Container[str] | None = None,
    ) -> ToolSearchCall:
        """Run the ``tool_search`` meta-tool with the model's arguments; never raises.

        The same as ``call("tool_search", arguments)``, with what it found kept typed.
        ``servers``: search only their tools, as if no other were mounted (what a client
        limited to some namespaces may find); ``tools``: only the tools of these public
        names (what a policy lets a client find); None: every tool.
        """
        return self._redacted_search(
            self.observers.searching(
                lambda: self._catalog.tool_search(arguments, servers=servers, tools=tools)
            )
        )

    async def run_tool_search(
        self, arguments: Mapping[str, Any] | None, *, servers: Container[str] | None = None
    ) -> ToolSearchCall:
        """`tool_search` off the event loop's back: with a semantic model, a new query's
        vector is computed in a worker thread (`call` and the served registry use this)."""
        return self._redacted_search(
            await self.observers.searching_async(
                lambda: self._catalog.run_tool_search(arguments, servers=servers)
            )
        )

    def _redacted_search(self, call: ToolSearchCall) -> ToolSearchCall:
        """``call`` with every known secret redacted from the definitions it shows."""
        result = self._interception.secrets.redact_model(call.result)
        return call if result is call.result else replace(call, result=result)

    @property
    def failures(self) -> dict[str, ServerError]:
        """Optional servers that failed to mount, with their errors."""
        return dict(self._servers.failures)

    def status(self) -> list[ServerStatus]:
        """Return one row per mounted server, sorted by namespace."""
        servers = self._servers
        return status_rows(servers.supervisors, self._catalog.of, servers.stats)

    def listings(self) -> list[ServerListing]:
        """Return what each mounted server lists, as `mcpmount.audit.audit` reads it."""
        of, approval = self._library.of, self.settings.approval
        return [
            listing_of(supervisor, self._catalog.of(server), of(server), approval)
            for server, supervisor in sorted(self._servers.supervisors.items())
        ]
