"""One server's connection, owned by exactly one task from connect to close.

The SDK's ``Client`` holds task groups whose cancel scopes belong to the task that
entered it, so it must be entered and exited by the same, still living task: exiting it
from another task raises ``RuntimeError``, and a task that ends while it is open leaks the
server. ``Connection.run`` is that task: it connects, lists and checks every tool, reports
``started``, then waits until it is told to stop or its server dies. Calls come from any
task. Once started, the owner never raises into the shared task group: a server that dies
is marked failed and its error kept, and no other server notices. Prompts, resources and
templates are listed with the tools (`list_checked`), under the same rules. Each listing
passes one `Cleaner` (``hidden_text``), which warns once of what it stripped, and each
result its `ResultCleaner` (``answers``, as `request` does for prompts and reads).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any

import anyio
import mcp_types
import pydantic
from anyio.abc import TaskStatus
from mcp import Client, MCPError
from mcp.shared.dispatcher import ProgressFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.audit import Cleaner, HiddenText, ResultCleaner
from mcpmount.config import EffectiveSettings, RegistrySettings, ServerSpec
from mcpmount.errors import (
    CallTimeoutError,
    RegistryError,
    ServerCrashedError,
    ServerNotRunningError,
    ServerStartError,
    UpstreamError,
    describe_invalid,
)
from mcpmount.handlers import ClientHandlers
from mcpmount.listing import Freshness, SchemaVetting, ServerContent
from mcpmount.processes import Reaper
from mcpmount.transports import ServerTransport, transport_for
from mcpmount.upstream._asking import Asking
from mcpmount.upstream._failures import StartFailures, check_size
from mcpmount.upstream._feed import ChangeFeed
from mcpmount.upstream._opening import client_for, list_again, list_checked
from mcpmount.upstream._state import ServerState
from mcpmount.upstream._tasks import TaskStatusWatch, run_task

__all__ = ["Connection"]

logger = logging.getLogger(__name__)

_RELIST_DEBOUNCE = 0.1
"""Seconds to wait after a list-change notice for more of them, before re-listing once."""


@dataclass(eq=False)
class Connection:
    """A live connection to one server; see the module docstring for who owns what."""

    server: str
    """The server's namespace."""

    spec: ServerSpec
    settings: RegistrySettings
    """The registry's; what this server runs with is ``effective``."""
    effective: EffectiveSettings = field(init=False)
    """Its inherited settings (limits, timeouts, roots, ...) resolved once, at creation."""

    on_lost: Callable[[Connection], None] | None = None
    """Called (from the owner task) when a ready server dies by itself."""

    on_tools: Callable[[Connection, list[mcp_types.Tool], ServerContent], None] | None = None
    """Called (from the owner task) with the checked lists after a re-list on a list change.
    It applies them or raises to refuse them; either way the connection stays up."""

    on_updated: Callable[[Connection, str], None] | None = None
    """Called with the raw URI of each resource update the server announces."""

    on_task_status: Callable[[Connection, mcp_types.Task], None] | None = None
    """Called with each task status the server reports (``notifications/tasks/status``)."""

    state: ServerState = ServerState.STARTING
    error: str | None = None
    """Why the server failed, for status and for calls that arrive afterwards."""

    tools: list[mcp_types.Tool] = field(default_factory=list[mcp_types.Tool])
    """The checked tool list (raw names), set before the owner reports started."""

    content: ServerContent = field(default_factory=ServerContent)
    """Its checked prompts, resources and templates (raw), set with ``tools``."""

    freshness: Freshness = field(default_factory=Freshness)
    """What its lists said of caching them (2026-07-28 era), set with ``tools``."""

    startup_seconds: float | None = None
    feed: ChangeFeed = field(init=False)
    """Its list-change notices and resource updates (and subscriptions), both eras."""
    transport: ServerTransport = field(init=False)
    """How the server is reached: the kind ``spec`` names, unless ``use_transport`` is given."""
    failures: StartFailures = field(init=False)

    relist_error: str | None = None
    """Why the last re-list on a list change was not applied, if it was not."""

    hidden: tuple[HiddenText, ...] = ()
    """Hidden characters stripped from its last applied lists (``hidden_text = "strip"``)."""

    schemas: SchemaVetting = field(default_factory=SchemaVetting)
    """Verdicts on schemas already checked: the registry's, shared by its connections."""

    handlers: InitVar[ClientHandlers | None] = None
    """The host's answers to what the server asks; a capability is offered only with one."""
    log_level: InitVar[mcp_types.LoggingLevel | None] = None
    """The level of log messages the host asked for; None asks for nothing."""
    asking: Asking = field(init=False)
    answers: ResultCleaner = field(init=False)
    """Strips hidden characters from its results, prompts and reads (``hidden_text``)."""
    tasks: TaskStatusWatch = field(init=False)
    """Its tasks' status notices, to their waiters and to ``on_task_status``."""
    clocked_by_sdk: bool = field(default=False, init=False)
    """Whether the SDK's request clock (``timeout`` of `call`) bounds a whole call (set
    once connected): the transport takes every write at once, and no question's handler
    runs off that clock. In the handshake era a question is answered while its call's
    request waits, on the clock; in the 2026-07-28 era, between the requests of a call, so
    only a server that cannot ask is clocked so."""

    _client: Client | None = None
    _wake: anyio.Event = field(default_factory=anyio.Event)
    _done: anyio.Event = field(default_factory=anyio.Event)
    _scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _stopping: bool = False
    _lost: str | None = None
    _relist_scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    use_transport: InitVar[ServerTransport | None] = None
    """A transport to use instead of the one ``spec`` names (e.g. a `MemoryTransport`)."""

    reaper: InitVar[Reaper | None] = None
    """The watchdog that ends a stdio server's process group if the host dies."""

    def __post_init__(
        self,
        handlers: ClientHandlers | None,
        log_level: mcp_types.LoggingLevel | None,
        use_transport: ServerTransport | None,
        reaper: Reaper | None,
    ) -> None:
        self.effective = self.spec.effective(self.settings)
        self.asking = Asking(
            self.server, self.spec, handlers, log_level, roots=self.effective.roots
        )
        if use_transport is None:
            use_transport = transport_for(self.spec, self.settings, reaper, server=self.server)
        self.transport = use_transport
        self.failures = StartFailures(self.server, self.spec, use_transport)
        self.answers = ResultCleaner(self.server, self.effective.hidden_text)
        self.feed = ChangeFeed(self.server, self._notice_list_changed, self._updated)
        self.tasks = TaskStatusWatch(self._task_status)

    def hold(self, tools: list[mcp_types.Tool], content: ServerContent) -> None:
        """Stand for a server not started: hold its cached lists, never run (closes at once)."""
        self.tools, self.content = tools, content
        self.state = ServerState.CLOSED
        self._done.set()

    @property
    def client(self) -> Client | None:
        """The SDK client while the server is up (for requests other than tool calls)."""
        return self._client

    @property
    def pid(self) -> int | None:
        """The stdio server's pid, once it has one."""
        return self.transport.diagnostics.pid

    async def run(self, *, task_status: TaskStatus[Connection] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own the connection: connect, list, report started, wait, close.

        Raises:
            ServerStartError: Before ``started``, on any failure to come up.
            ToolListError: Before ``started``, when the tool list is refused.
        """
        began = anyio.current_time()
        deadline = began + self._startup_timeout()
        started = False
        try:
            with self._scope, anyio.CancelScope(deadline=deadline) as startup:
                opened = self.transport.open(self._transport_lost)
                client = client_for(self.spec, opened, self.feed, self.asking, self.tasks)
                async with client, anyio.create_task_group() as watchers:
                    modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
                    if modern:
                        # Subscribe before listing, so no change falls between the two.
                        await watchers.start(self.feed.listen, client)
                    self.asking.client = client  # a level set from now on is sent at once
                    await self.asking.log.apply(client)
                    tools, content, fresh, cleaner = await list_checked(
                        client, self.server, self.spec, self.effective, self.schemas
                    )
                    self.tools, self.content, self.freshness = tools, content, fresh
                    self.cleaned(cleaner)
                    startup.deadline = math.inf
                    self._client = client
                    self.clocked_by_sdk = self.transport.writes_at_once and not (
                        modern and self.asking.asks
                    )
                    self.state = ServerState.READY
                    self.startup_seconds = anyio.current_time() - began
                    started = True
                    task_status.started(self)
                    await self._serve(client)
                    watchers.cancel_scope.cancel()
            if not started and self._stopping:
                raise ServerStartError(self.server, "it was closed while it was starting")
            if not started:
                raise self.failures.timed_out(deadline - began)
        except Exception as exc:
            if not started:
                self.state = ServerState.FAILED
                timed_out = not self._stopping and anyio.current_time() >= deadline
                raise self.failures.failed(
                    exc, timed_out=timed_out, timeout=self._startup_timeout()
                ) from None
            if not self._stopping:
                self._mark_lost(self.transport.describe(exc, starting=False))
            else:
                logger.debug("server %r: error while closing: %r", self.server, exc)
        finally:
            self._client = self.asking.client = None
            self._done.set()
        if started:
            self._finish()

    async def _serve(self, client: Client) -> None:
        """Wait until stopped or lost; re-list the tools whenever the server says they changed."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()  # whoever wakes us next sets the new one
            if self._stopping or self._lost is not None:
                return
            # One re-list for a burst of notices; a close cuts the wait and the re-list short.
            with self._relist_scope:
                await anyio.sleep(_RELIST_DEBOUNCE)
                await self._relist(client)
            if self._relist_scope.cancel_called:
                return
            self._relist_scope = anyio.CancelScope()

    async def _relist(self, client: Client) -> None:
        """List every page again and hand it to ``on_tools``; on any error keep the old list."""
        try:
            timeout = self._startup_timeout()
            tools, content, fresh, cleaner = await list_again(
                client, self.server, self.spec, self.effective, self.schemas, timeout
            )
            if self.on_tools is not None:
                self.on_tools(self, tools, content)
            self.tools, self.content, self.freshness = tools, content, fresh
            self.cleaned(cleaner)
        except (RegistryError, MCPError, TimeoutError) as exc:
            logger.warning("server %r: its changed lists were not applied: %s", self.server, exc)
            self.relist_error = str(exc)
        else:
            self.relist_error = None

    def cleaned(self, cleaner: Cleaner) -> None:
        """Keep what ``cleaner`` stripped from the lists just applied; warn if that changed
        (so a server re-listing the same text is named once, not at every list change)."""
        found = tuple(cleaner.found)
        if found != self.hidden:
            cleaner.warn()
        self.hidden = found

    def _updated(self, uri: str) -> None:
        if self.on_updated is not None:
            self.on_updated(self, uri)

    def _task_status(self, task: mcp_types.Task) -> None:
        if self.on_task_status is not None:
            self.on_task_status(self, task)

    def _notice_list_changed(self) -> None:
        self._wake.set()

    def _finish(self) -> None:
        if self._stopping and self._lost is None:
            self.state = ServerState.CLOSED
            return
        self._mark_lost("the connection ended")
        if not self._stopping and self.on_lost is not None:
            self.on_lost(self)

    def _mark_lost(self, reason: str) -> None:
        """Record, once, that a ready server died by itself; calls fail fast from now on."""
        if self._lost is not None:
            return
        self._lost = reason
        self.state = ServerState.FAILED
        self.error = self.failures.with_stderr(self.spec.redact(reason))
        logger.warning("server %r is no longer running: %s", self.server, self.error)

    async def aclose(self) -> None:
        """Close the connection and reap its transport. Idempotent, bounded, never raises."""
        self._stopping = True
        self._wake.set()
        self._relist_scope.cancel()
        if self.state is ServerState.STARTING:
            self._scope.cancel()  # nothing to wind down yet; the transport's reap is shielded
        bound = self.transport.close_bound
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(bound):
                await self._done.wait()
                return
            # Past the bound: cut the owner off. A transport's shielded shutdown (a stdio
            # reap) still finishes within its bound; what is not shielded is abandoned.
            logger.warning("server %r did not close within %gs; cancelling it", self.server, bound)
            self._scope.cancel()
            with anyio.move_on_after(bound):
                await self._done.wait()

    async def call(
        self,
        tool: str,
        raw_name: str,
        arguments: Mapping[str, Any] | None,
        progress: ProgressFnT | None = None,
        context: object | None = None,
        timeout: float | None = None,
        as_task: bool = False,
    ) -> mcp_types.CallToolResult:
        """Call ``raw_name``; ``tool`` is its public name (for errors, and for `Asker`).

        ``as_task`` runs it as a task and waits for its result (`run_task`): the caller's
        cancel scope is then its only clock (``timeout`` is not used), and progress
        reports the task's status.

        ``timeout`` is the SDK's own request clock: it starts once the request is written,
        stops while the SDK waits on a person (an OAuth login), and when it runs out the
        SDK tells the server the call is cancelled. It bounds the whole call only where
        `clocked_by_sdk` says so; elsewhere the caller's cancel scope is the clock, and its
        cancellation sends the same notice.

        Raises:
            ServerNotRunningError: The server is not ready; nothing was sent.
            CallTimeoutError: No answer within ``timeout``; the outcome is unknown.
            ServerCrashedError: The connection was lost while the call was in flight.
            UpstreamError: The server answered with a JSON-RPC error.
            ResultTooLargeError: The result exceeds ``max_result_bytes``.
            ResultWithheldError: It holds hidden characters, under ``hidden_text = "refuse"``.
        """
        client = self._client
        if client is None or self.state is not ServerState.READY or self._lost is not None:
            reason = self.error or self._lost or f"it is {self.state}"
            raise ServerNotRunningError(self.server, tool, reason)
        try:
            meta = self.asking.log.call_meta(client)
            with self.asking.calling(tool, context):
                if as_task:
                    result = await run_task(client, self.tasks, raw_name, arguments, progress, meta)
                else:
                    result = await client.call_tool(
                        raw_name,
                        dict(arguments) if arguments is not None else None,
                        read_timeout_seconds=timeout,
                        progress_callback=progress,
                        meta=meta,
                    )
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ServerCrashedError(self.server, tool, await self._loss_reason()) from None
            if exc.code == mcp_types.REQUEST_TIMEOUT and timeout is not None:
                raise CallTimeoutError(self.server, tool, timeout) from None
            message = self.spec.redact(exc.message)
            raise UpstreamError(self.server, tool, exc.code, message) from None
        except RuntimeError as exc:  # the SDK's outputSchema check of structured content
            message = self.spec.redact(str(exc))
            raise UpstreamError(self.server, tool, mcp_types.INTERNAL_ERROR, message) from None
        except pydantic.ValidationError as exc:  # a result that is not a CallToolResult
            message = f"its result is invalid: {describe_invalid(exc)}"
            raise UpstreamError(self.server, tool, mcp_types.INTERNAL_ERROR, message) from None
        check_size(result, self.server, tool, self.effective.max_result_bytes)
        return self.answers.clean("tool", tool, result)

    async def _loss_reason(self) -> str:
        """Say why the connection was lost, once the transport had a moment to learn it."""
        failure = await self.transport.wait_failure()
        if failure is not None:
            return failure
        return self._lost or "connection closed"

    def _transport_lost(self, reason: str) -> None:
        if not self._stopping and self.state is ServerState.READY:
            self._mark_lost(reason)
        self._wake.set()

    def _startup_timeout(self) -> float:
        return self.effective.startup_timeout
