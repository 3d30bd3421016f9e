"""The MCP front of a registry: its handlers, its sessions' views and change propagation.

`RegistryServer` puts the SDK's low-level ``Server`` in front of a `Registry`:

- ``tools/list`` is the manifest (listed tools, plus ``tool_search`` when any tool is
  deferred), in one page. The tools a session's ``tool_search`` found join *its* list, and
  it is told so; a request without a session sees ``call_tool`` too, and a conversation
  header keys its finds (`ToolLists`, `mcpmount.serve.front._lists`).
- ``tools/call`` routes every registered name, deferred ones included, and ``call_tool``.
  The upstream result goes back as it came: every content block type, structured
  content, ``_meta`` (less the upstream's ``serverInfo`` stamp) and ``isError``.
  Upstream progress is forwarded to the downstream request's progress token.
- Registry errors map to what the client can act on:

  ============================  ===========================================================
  ``UnknownToolError``          JSON-RPC error ``-32602`` (invalid params), with suggestions
  ``UpstreamError``             JSON-RPC error with the upstream code and message; the
                                server and tool are in ``data``
  any other ``RegistryError``   an ``isError`` result whose text names server and tool
  (timeout, crash, not running,  (the model must see it: a timed-out call may have acted)
  result too large)
  ============================  ===========================================================

- What upstream servers ask mid-call (sampling, elicitation, roots, approval) goes to
  the downstream client of that call, in both eras (`Relay`); their log messages go to the
  sessions that want them, and ``logging/setLevel`` sets a session's level (`Logs`).
  `open_front` builds a registry wired to both.

- Prompts, resources, templates and completions are the registry's (`Content`); resource
  subscriptions are shared upstream and their updates forwarded (`Subscriptions`).

Change propagation is `Changes`' (`mcpmount.serve.sessions._changes`); the first answers wait for
the required servers and a short bound (`Startup`, `mcpmount.serve.front._startup`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from importlib.metadata import version
from typing import Any

import anyio
import mcp_types
from mcp import MCPError
from mcp.server import InitializationOptions, Server, ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.subscriptions import InMemorySubscriptionBus, SubscriptionBus

from mcpmount.catalog import Pins
from mcpmount.codemode import RUN_CODE_NAME
from mcpmount.config import RegistrySettings
from mcpmount.errors import RegistryError, UnknownToolError, UpstreamError
from mcpmount.registry import Registry
from mcpmount.search import TOOL_SEARCH_NAME
from mcpmount.serve.access import Door, Principal, current_principal
from mcpmount.serve.front._activations import ActivationStore, InMemoryActivations
from mcpmount.serve.front._call_tool import CALL_TOOL_NAME, CallToolOffer, unwrap
from mcpmount.serve.front._code import CodeFront
from mcpmount.serve.front._content import Content, without_server_info
from mcpmount.serve.front._gate import Gate
from mcpmount.serve.front._lists import ToolLists
from mcpmount.serve.front._low_level import FrontServer
from mcpmount.serve.front._retries import Retries
from mcpmount.serve.front._screen import UNREADABLE_METHOD, Unreadable, refuse_unreadable
from mcpmount.serve.front._spans import Spans
from mcpmount.serve.front._startup import Startup
from mcpmount.serve.quotas import Limits, Quotas
from mcpmount.serve.relay import Downstream, Relay
from mcpmount.serve.sessions import Changes, Kind, Logs, Sessions, Subscriptions
from mcpmount.serve.tasks import TaskFront, TaskIds

__all__ = ["RegistryServer", "open_front"]

logger = logging.getLogger(__name__)


class RegistryServer:
    """One MCP server whose tools are a registry's; build it, then run a transport.

    Args:
        registry: An entered registry; it is served, not owned.
        name: The ``serverInfo`` name downstream clients see.
        startup: The initial mounts (`serve`): the first answers wait for them; without
            it, nothing waits.
        relay: The running relay whose handlers the registry was given (`open_front`);
            without one, what servers ask is answered by the registry's own handlers.
        logs: Where the registry's log handler sends upstream messages (`open_front`).
        activations: Where each conversation's found tools are kept; default: this
            process's memory (`InMemoryActivations`).
        bus: The ``subscriptions/listen`` fan-out (a `RedisSubscriptionBus` shares it
            between replicas); by default, this process's own.
        call_tool: Who sees ``call_tool`` beside ``tool_search``: every caller, or only
            those without a session (`ServeSettings.call_tool`).
        task_ids: Where the downstream ids of relayed tasks are kept; default: this
            process's memory (`InMemoryTaskIds`).
        limits: The rate limits and caps of tool calls, enforced past the gate; none
            without.
    """

    def __init__(
        self,
        registry: Registry,
        *,
        name: str = "mcpmount",
        startup: Startup | None = None,
        relay: Relay | None = None,
        logs: Logs | None = None,
        activations: ActivationStore | None = None,
        bus: SubscriptionBus | None = None,
        call_tool: CallToolOffer = "every",
        task_ids: TaskIds | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.registry = registry
        self.relay = relay
        self.logs = logs if logs is not None else Logs(Sessions())
        self.startup = startup
        """The initial mounts; ``tools/list``, ``tools/call`` and the other lists wait for
        `Startup.answering`."""
        self.bus: SubscriptionBus = bus if bus is not None else InMemorySubscriptionBus()
        """The 2026-07-28 ``subscriptions/listen`` fan-out."""
        self.door = Door(registry)
        """What each principal may see: every answer, notice and search asks it."""
        self._subscriptions = Subscriptions(registry, self.bus, self.door)
        self._content = content = Content(registry, self.door, self._wait_mounted, relay)
        self.server: Server[Any] = FrontServer(
            name,
            version=version("mcpmount"),
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=content.list_prompts,
            on_get_prompt=content.get_prompt,
            on_list_resources=content.list_resources,
            on_list_resource_templates=content.list_templates,
            on_read_resource=content.read_resource,
            on_completion=content.complete,
            on_subscribe_resource=self._subscriptions.subscribe,
            on_unsubscribe_resource=self._subscriptions.unsubscribe,
            on_subscriptions_listen=self._subscriptions.listen,
        )
        self.code = CodeFront(registry, self.door, self.server)
        """``run_code``: each call of a program re-enters the request path."""
        middleware = self.server.middleware
        for at, each in enumerate(middleware):
            if isinstance(each, OpenTelemetryMiddleware):
                middleware[at] = Spans(each)  # the SDK's span, when it can matter
        self._watched_at = len(middleware)
        middleware.append(self._track_session)
        middleware.append(Gate(self.door))  # what a token may see
        if limits is not None:  # past the gate: a hidden tool stays unknown
            middleware.append(Quotas(registry, limits))
        timeout = relay.rounds.round_timeout if relay is not None else 120.0
        self.tasks = TaskFront(registry, task_ids, timeout, self._wait_called)
        """The task requests (past the gate: a hidden tool is refused before)."""
        self.tasks.install(self.server)
        self.server.add_request_handler(UNREADABLE_METHOD, Unreadable, refuse_unreadable)
        # Not the constructor's on_set_logging_level and on_roots_list_changed: they warn
        # (deprecated in 2026-07-28).
        self.server.add_request_handler(
            "logging/setLevel", mcp_types.SetLevelRequestParams, self._set_level
        )
        self.server.add_notification_handler(
            "notifications/roots/list_changed", mcp_types.NotificationParams, self._roots_changed
        )
        self._sessions = self.logs.sessions
        answering = startup.answering if startup is not None else None
        self._changes = Changes(registry, self._sessions, self.bus, answering=answering)
        store = activations if activations is not None else InMemoryActivations()
        self.lists = ToolLists(registry, self._sessions, store, call_tool=call_tool, door=self.door)
        """Each caller's tools list and searches; ``lists.store`` keeps their finds."""
        self.retries = Retries(registry, self._tell)
        """The servers that failed to mount, retried while `Retries.running` is entered;
        the clients are told of each."""
        self.before_call: Callable[[Principal, str | None, Downstream], Awaitable[None]] | None
        self.before_call = None
        """Awaited with the caller, the tool's server and the call before it goes upstream
        (`mcpmount.serve.credentials`: the caller's own login)."""

    def watch(self, middleware: ServerMiddleware[Any]) -> None:
        """Run ``middleware`` around every request, inside only the span (the call log)."""
        self.server.middleware.insert(self._watched_at, middleware)

    def initialization_options(self) -> InitializationOptions:
        """Return the handshake options: every list with ``listChanged``."""
        return self.server.create_initialization_options()

    async def _track_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Remember each handshake-era session, to tell it when the list changes; a new
        one is told first of the servers that are down."""
        key = self._sessions.key(ctx)
        new = key is not None and self._sessions.principal(key) is None
        self._sessions.track(ctx)
        if new and key is not None and (principal := self._sessions.principal(key)) is not None:
            for server, text in self.retries.notices():
                if principal.sees_any((server,)):
                    await self.logs.tell_one(ctx, server, "warning", text)
        return await call_next(ctx)

    async def _tell(self, server: str, level: mcp_types.LoggingLevel, text: str) -> None:
        """Send a message about ``server`` to the sessions that may see it."""
        params = mcp_types.LoggingMessageNotificationParams(level=level, logger=server, data=text)
        await self.logs.forward(server, params)

    # -- handlers -------------------------------------------------------------------------

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """A tool's input schema, for the SDK's ``Mcp-Param`` header check: none for a tool
        the request's principal may not see (the call is then refused as unknown)."""
        if not self.door.sees(current_principal(), "tool", name):
            return None
        try:
            return self.registry.get(name).definition.input_schema
        except UnknownToolError:
            return None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        await self._wait_mounted()
        return mcp_types.ListToolsResult(tools=self.code.listed(ctx, await self.lists.tools(ctx)))

    async def _wait_mounted(self) -> None:
        # Many clients list once and never again, and give up after a few seconds: the
        # first list holds the required servers, and the others for a short bound. (Once
        # answering, no wait: anyio's wait on a set event still yields to the event loop,
        # a turn of the loop on every call.)
        if self.startup is not None and not self.startup.answering.is_set():
            await self.startup.answering.wait()

    async def _wait_called(self, name: str) -> None:
        """Wait as a call of ``name`` does: for the first answers, then, when no mounted
        server has that name, for the initial mounts to end (its server may be one of an
        optional few still mounting past ``first_list_wait``)."""
        await self._wait_mounted()
        if self._server_of(name) is None and self.startup is not None:
            await self.startup.mounted.wait()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        await self._wait_mounted()
        caller = self.lists.caller(ctx)
        name, arguments = params.name, params.arguments
        if name == CALL_TOOL_NAME:
            call = unwrap(arguments)
            if isinstance(call, mcp_types.CallToolResult):
                return call
            name, arguments = call.name, call.arguments
        if name == RUN_CODE_NAME and self.code.enabled():
            return await self.code.run(ctx, arguments)
        if name == TOOL_SEARCH_NAME:
            search = await self.lists.search(caller, arguments)
            if search.grew and caller.session:
                await self._changes.tell_one(ctx, search.servers)
            return search.result
        server_of = self._server_of(name)
        if server_of is None and self.startup is not None:
            await self.startup.mounted.wait()  # its server may be one still mounting
            server_of = self._server_of(name)
        for server, level in self.logs.opt_in(ctx, server_of):
            await self.registry.set_log_level(level, server=server)

        async def run(downstream: Downstream) -> mcp_types.CallToolResult:
            if self.before_call is not None:
                await self.before_call(caller.principal, server_of, downstream)
            return await self.registry.call(
                name, arguments, progress=downstream.report_progress, context=downstream
            )

        try:
            with self.logs.during(server_of, ctx):
                result = await self._content.relayed(ctx, params, name, run)
        except UnknownToolError as exc:
            unknown = self.door.answer_unknown(caller.principal, exc)
            raise MCPError(mcp_types.INVALID_PARAMS, str(unknown)) from None
        except UpstreamError as exc:
            data = {"server": exc.server, "tool": exc.tool}
            raise MCPError(exc.code, exc.upstream_message, data) from None
        except RegistryError as exc:
            logger.info("call of %r failed: %s", name, exc)
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=str(exc))], is_error=True
            )
        if isinstance(result, mcp_types.InputRequiredResult):
            return result
        return without_server_info(result)

    def _server_of(self, name: str) -> str | None:
        try:
            return self.registry.get(name).server
        except UnknownToolError:
            return None

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.SetLevelRequestParams
    ) -> mcp_types.EmptyResult:
        """A session's log level: upstream messages below it are not sent to it, and each
        server is asked for the most verbose level of the clients that may see it."""
        for server, level in self.logs.set_level(ctx, params.level):
            await self.registry.set_log_level(level, server=server)
        return mcp_types.EmptyResult()

    async def _roots_changed(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.NotificationParams | None
    ) -> None:
        """A client's roots changed: every server that may ask for them is told."""
        await self.registry.roots_changed()

    async def tell_sessions(self, kind: Kind, servers: frozenset[str] | None) -> None:
        """Tell the handshake-era sessions that may see one of ``servers`` (None: every one)
        that a list changed that this registry did not (another replica's, through
        `SharedState`); listen streams have the bus."""
        await self._changes.tell_sessions(kind, servers)

    async def propagate_changes(self) -> None:
        """Tell every client each time the registry changes, and each subscriber of a
        resource when it is updated; runs until cancelled."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._changes.propagate)
            tg.start_soon(self._subscriptions.deliver)

    def close_streams(self) -> None:
        """End every open ``subscriptions/listen`` stream gracefully (before a shutdown:
        open streams would hold it)."""
        self._subscriptions.close_streams()


@contextlib.asynccontextmanager
async def open_front(
    settings: RegistrySettings,
    *,
    pins: Pins | None = None,
    startup: Startup | None = None,
    name: str = "mcpmount",
    activations: ActivationStore | None = None,
    bus: SubscriptionBus | None = None,
    call_tool: CallToolOffer = "every",
    task_ids: TaskIds | None = None,
    limits: Limits | None = None,
) -> AsyncGenerator[RegistryServer]:
    """Open an empty registry whose handlers relay to downstream clients, and its front.

    Mount servers into ``front.registry``; leaving closes the relayed calls and tasks, then
    every server. ``startup``, ``activations``, ``bus``, ``call_tool``, ``task_ids`` and
    ``limits`` go to `RegistryServer`.
    """
    logs = Logs(Sessions())
    relay = Relay(round_timeout=settings.call_timeout)
    handlers = relay.handlers(logging=logs.forward)
    async with (
        Registry(settings, pins=pins, handlers=handlers, approver=relay.approve) as registry,
        relay.rounds.running(),
    ):
        front = RegistryServer(
            registry,
            name=name,
            startup=startup,
            relay=relay,
            logs=logs,
            activations=activations,
            bus=bus,
            call_tool=call_tool,
            task_ids=task_ids,
            limits=limits,
        )
        async with front.tasks.running():
            yield front
