"""One server's connection, owned by exactly one task from connect to close.

The SDK's ``Client`` holds task groups whose cancel scopes belong to the task that
entered it, so it must be entered and exited by the same, still living task
(SDK_NOTES.md §5). ``Connection.run`` is that task: it connects, lists and checks every
tool, reports ``started``, then waits until it is told to stop or its server dies. Calls
come from any task. Once started, the owner never raises into the shared task group: a
server that dies is marked failed and its error kept, and no other server notices.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import anyio
import httpx2
import mcp_types
import pydantic
from anyio.abc import TaskStatus
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost, ToolsListChanged
from mcp.shared.dispatcher import ProgressFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_json

from mcpmount.config import HttpServer, RegistrySettings, ServerSpec, StdioServer
from mcpmount.errors import (
    CallTimeoutError,
    RegistryError,
    ResultTooLargeError,
    ServerCrashedError,
    ServerNotRunningError,
    ServerStartError,
    ToolListError,
    UpstreamError,
    describe_invalid,
)
from mcpmount.transports import (
    STDIN_GRACE,
    SWEEP_GRACE,
    TERM_GRACE,
    ProcessHandle,
    TransportState,
    open_transport,
)
from mcpmount.upstream._listing import check_tools, list_all_tools

__all__ = ["Connection", "ServerState"]

logger = logging.getLogger(__name__)

_CLIENT_INFO = mcp_types.Implementation(name="mcpmount", version=version("mcpmount"))

_STDIO_CLOSE_BOUND = 0.5 + STDIN_GRACE + 2 * TERM_GRACE + 2 * SWEEP_GRACE + TERM_GRACE + 1.0
"""Worst case of a stdio close (flush, stdin grace, TERM and KILL of the group, TERM and
KILL of a sweep, the wait for the leader's reaping) plus slack."""

_HTTP_CLOSE_BOUND = 3.0
"""How long an HTTP session gets to end (DELETE) before it is cut off."""

_STDERR_TAIL_CHARS = 1000

_RELIST_DEBOUNCE = 0.1
"""Seconds to wait after a list-change notice for more of them, before re-listing once."""

_OPAQUE_PAYLOAD = 1 << 62
"""Counts a block of unknown size (e.g. an embedded resource) as "measure it"."""

_EXIT_NOTICE_WAIT = 0.5
"""How long a failed call waits to learn that (and how) the server process exited."""


class ServerState(enum.StrEnum):
    """Where a server is in its life."""

    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"
    CLOSED = "closed"


@dataclass(eq=False)
class Connection:
    """A live connection to one server; see the module docstring for who owns what."""

    server: str
    """The server's namespace."""

    spec: ServerSpec
    settings: RegistrySettings

    on_lost: Callable[[Connection], None] | None = None
    """Called (from the owner task) when a ready server dies by itself."""

    on_tools: Callable[[Connection, list[mcp_types.Tool]], None] | None = None
    """Called (from the owner task) with the checked list after a re-list on a list change.
    It applies the list or raises to refuse it; either way the connection stays up."""

    state: ServerState = ServerState.STARTING
    error: str | None = None
    """Why the server failed, for status and for calls that arrive afterwards."""

    tools: list[mcp_types.Tool] = field(default_factory=list[mcp_types.Tool])
    """The checked tool list (raw names), set before the owner reports started."""

    startup_seconds: float | None = None
    transport: TransportState = field(default_factory=TransportState)

    relist_error: str | None = None
    """Why the last re-list on a list change was not applied, if it was not."""

    _client: Client | None = None
    _wake: anyio.Event = field(default_factory=anyio.Event)
    _done: anyio.Event = field(default_factory=anyio.Event)
    _scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _stopping: bool = False
    _lost: str | None = None
    _relist_scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def __post_init__(self) -> None:
        self.settings = self.spec.limits(self.settings)  # the server's own limit overrides

    @property
    def pid(self) -> int | None:
        """The stdio server's pid, while it has one."""
        process = self.transport.process
        return process.pid if process is not None else None

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
                async with self._client_for() as client, anyio.create_task_group() as watchers:
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS and _lists_changes(
                        client
                    ):
                        # Subscribe before listing, so no change falls between the two.
                        await watchers.start(self._listen, client)
                    listed = await list_all_tools(client, self.server, self.settings)
                    self.tools = check_tools(
                        self.server, listed, self.settings, self.spec.invalid_names
                    )
                    startup.deadline = math.inf
                    self._client = client
                    self.state = ServerState.READY
                    self.startup_seconds = anyio.current_time() - began
                    started = True
                    task_status.started(self)
                    await self._serve(client)
                    watchers.cancel_scope.cancel()
            if not started and self._stopping:
                raise ServerStartError(self.server, "it was closed while it was starting")
            if not started:
                raise ServerStartError(self.server, self._timeout_message(deadline - began))
        except Exception as exc:
            if not started:
                self.state = ServerState.FAILED
                timed_out = not self._stopping and anyio.current_time() >= deadline
                raise self._start_error(exc, timed_out=timed_out) from None
            if not self._stopping:
                self._mark_lost(_describe(exc, self.spec, self.transport, starting=False))
            else:
                logger.debug("server %r: error while closing: %r", self.server, exc)
        finally:
            self._client = None
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
            with anyio.fail_after(self._startup_timeout()):
                listed = await list_all_tools(client, self.server, self.settings)
            tools = check_tools(self.server, listed, self.settings, self.spec.invalid_names)
            if self.on_tools is not None:
                self.on_tools(self, tools)
            self.tools = tools
        except (RegistryError, MCPError, TimeoutError) as exc:
            logger.warning("server %r: its changed tool list was not applied: %s", self.server, exc)
            self.relist_error = str(exc)
        else:
            self.relist_error = None

    async def _listen(
        self, client: Client, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Hold a 2026-07-28 ``subscriptions/listen`` stream open, so list changes arrive.

        Reports started once the server acknowledged the stream (or refused it).
        """
        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                started = True
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._notice_list_changed()
        except (MCPError, SubscriptionLost, ListenNotSupportedError, TimeoutError) as exc:
            logger.info("server %r: no live tool-list changes (%s)", self.server, exc)
        if not started:
            task_status.started()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._notice_list_changed()

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
        self.error = self._with_stderr(self.spec.redact(reason))
        logger.warning("server %r is no longer running: %s", self.server, self.error)

    async def aclose(self) -> None:
        """Close the connection and reap its transport. Idempotent, bounded, never raises."""
        self._stopping = True
        self._wake.set()
        self._relist_scope.cancel()
        if self.state is ServerState.STARTING:
            self._scope.cancel()  # nothing to wind down yet; the transport's reap is shielded
        bound = _STDIO_CLOSE_BOUND if isinstance(self.spec, StdioServer) else _HTTP_CLOSE_BOUND
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(bound):
                await self._done.wait()
                return
            # Past the bound: cut the owner off. The stdio shutdown is shielded and still
            # finishes its (bounded) reaping; an HTTP DELETE that hangs is abandoned.
            logger.warning("server %r did not close within %gs; cancelling it", self.server, bound)
            self._scope.cancel()
            with anyio.move_on_after(_STDIO_CLOSE_BOUND):
                await self._done.wait()

    async def call(
        self,
        tool: str,
        raw_name: str,
        arguments: Mapping[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
    ) -> mcp_types.CallToolResult:
        """Call ``raw_name``; ``tool`` is its public name, for errors.

        Raises:
            ServerNotRunningError: The server is not ready; nothing was sent.
            CallTimeoutError: No answer within ``timeout``; the outcome is unknown.
            ServerCrashedError: The connection was lost while the call was in flight.
            UpstreamError: The server answered with a JSON-RPC error.
            ResultTooLargeError: The result exceeds ``max_result_bytes``.
        """
        client = self._client
        if client is None or self.state is not ServerState.READY or self._lost is not None:
            reason = self.error or self._lost or f"it is {self.state}"
            raise ServerNotRunningError(self.server, tool, reason)
        try:
            # The SDK's own request clock bounds the wait (and tells the server the call is
            # cancelled); a second cancel scope here would cost more than the rest of this
            # method. A request that cannot even be written is bounded by the transport.
            result = await client.call_tool(
                raw_name,
                dict(arguments) if arguments is not None else None,
                read_timeout_seconds=timeout,
                progress_callback=progress,
            )
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise CallTimeoutError(self.server, tool, timeout) from None
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise ServerCrashedError(self.server, tool, await self._loss_reason()) from None
            message = self.spec.redact(exc.message)
            raise UpstreamError(self.server, tool, exc.code, message) from None
        except RuntimeError as exc:  # the SDK's outputSchema check of structured content
            message = self.spec.redact(str(exc))
            raise UpstreamError(self.server, tool, mcp_types.INTERNAL_ERROR, message) from None
        except pydantic.ValidationError as exc:  # a result that is not a CallToolResult
            message = f"its result is invalid: {describe_invalid(exc)}"
            raise UpstreamError(self.server, tool, mcp_types.INTERNAL_ERROR, message) from None
        limit = self.settings.max_result_bytes
        # Serializing every result again would cost more than the rest of the call path; the
        # payload estimate is exact enough far from the limit, so only near it do we measure.
        if _payload_size(result) * 2 > limit:
            size = len(result.model_dump_json(by_alias=True, exclude_none=True))
            if size > limit:
                raise ResultTooLargeError(self.server, tool, size, limit)
        return result

    async def _loss_reason(self) -> str:
        """Say why the connection was lost; stdout EOF may arrive just before the exit notice."""
        process = self.transport.process
        if process is not None:
            with anyio.move_on_after(_EXIT_NOTICE_WAIT):
                await process.exited.wait()
            if process.failure is not None:
                return process.failure
        return self._lost or "connection closed"

    def _client_for(self) -> Client:
        return Client(
            open_transport(self.spec, self.settings, self.transport, self._transport_lost),
            mode=self.spec.protocol,
            cache=None,  # the registry decides when to list; a stale cached list would lie
            client_info=_CLIENT_INFO,
            message_handler=self._on_message,
        )

    def _transport_lost(self, handle: ProcessHandle) -> None:
        if not self._stopping and self.state is ServerState.READY:
            self._mark_lost(handle.failure or "the process exited")
        self._wake.set()

    def _timeout_message(self, seconds: float) -> str:
        what = "connect, handshake and list its tools"
        return self._with_stderr(
            f"did not {what} within {seconds:g} s (startup_timeout); check that it is an MCP "
            "server speaking on stdout, or raise startup_timeout"
        )

    def _start_error(self, exc: Exception, *, timed_out: bool) -> ServerStartError | ToolListError:
        leaves = _leaves(exc)
        for leaf in leaves:
            if isinstance(leaf, ToolListError | ServerStartError):
                return leaf
        if timed_out:
            return ServerStartError(self.server, self._timeout_message(self._startup_timeout()))
        return ServerStartError(
            self.server,
            self._with_stderr(
                self.spec.redact(_describe(exc, self.spec, self.transport, starting=True))
            ),
        )

    def _startup_timeout(self) -> float:
        return self.spec.startup_timeout or self.settings.startup_timeout

    def _with_stderr(self, message: str) -> str:
        process = self.transport.process
        if process is None:
            return message
        tail = self.spec.redact(process.stderr_tail(_STDERR_TAIL_CHARS).strip())
        return f"{message}\n    stderr: {tail}" if tail else message


def _payload_size(result: mcp_types.CallToolResult) -> int:
    """Estimate a result's size from its text and binary payloads (a lower bound)."""
    size = 0 if result.structured_content is None else len(to_json(result.structured_content))
    for block in result.content:
        match block:
            case mcp_types.TextContent():
                size += len(block.text)
            case mcp_types.ImageContent() | mcp_types.AudioContent():
                size += len(block.data)
            case _:
                size += _OPAQUE_PAYLOAD
    return size


def _lists_changes(client: Client) -> bool:
    tools = client.server_capabilities.tools
    return tools is not None and bool(tools.list_changed)


def _leaves(exc: BaseException) -> list[BaseException]:
    """Flatten (nested) exception groups to their leaves, in order."""
    if isinstance(exc, BaseExceptionGroup):
        group: BaseExceptionGroup[BaseException] = exc  # pyright: ignore[reportUnknownVariableType]
        return [leaf for inner in group.exceptions for leaf in _leaves(inner)]
    return [exc]


def _describe(
    exc: BaseException, spec: ServerSpec, transport: TransportState, *, starting: bool
) -> str:
    """Say what went wrong, from the most telling leaf of a (nested) exception group."""
    when = " during startup" if starting else ""
    leaves = [
        leaf for leaf in _leaves(exc) if not isinstance(leaf, anyio.get_cancelled_exc_class())
    ]
    statuses = transport.http_statuses
    if isinstance(spec, HttpServer) and statuses:
        return _http_status_message(statuses[-1], spec)
    for leaf in leaves:
        match leaf:
            case FileNotFoundError() if isinstance(spec, StdioServer):
                if spec.cwd is not None and leaf.filename == spec.cwd:
                    return f"its cwd {spec.cwd!r} does not exist"
                return f"command {spec.command!r} was not found; check `command` and PATH"
            case PermissionError() if isinstance(spec, StdioServer):
                return f"command {spec.command!r} is not executable ({leaf.strerror})"
            case httpx2.ConnectError() | httpx2.ConnectTimeout() if isinstance(spec, HttpServer):
                url = spec.display_url()
                return f"cannot connect to {url}: {_short(leaf)}; is the server running?"
            case httpx2.HTTPError():
                return f"HTTP failure talking to the server: {type(leaf).__name__}: {_short(leaf)}"
            case MCPError() if leaf.code == mcp_types.CONNECTION_CLOSED:
                process = transport.process
                if process is not None and process.failure is not None:
                    return f"{process.failure}{when}"
                return f"the server closed the connection{when}"
            case MCPError():
                return f"the server answered with error {leaf.code}: {leaf.message}"
            case _:
                pass
    if not leaves:
        return "cancelled"
    leaf = leaves[0]
    return f"{type(leaf).__name__}: {_short(leaf)}"


def _http_status_message(status: int, spec: HttpServer) -> str:
    url = spec.display_url()
    match status:
        case 401 | 403:
            return f"HTTP {status} from {url}: the server refused the credentials; check `headers`"
        case 404:
            return f"HTTP 404 from {url}: no MCP endpoint there; check the path in `url`"
        case _:
            return f"HTTP {status} from {url}"


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."
