"""Serve a registry as one MCP server, over stdio or streamable HTTP.

`RegistryServer` puts the SDK's low-level ``Server`` in front of a `Registry`:

- ``tools/list`` is the manifest (visible tools, plus ``tool_search`` when any tool is
  deferred), in one page. A downstream session gets its own `View`, so the tools its
  ``tool_search`` calls found join *its* list, and it is told so (see below).
- ``tools/call`` routes every registered name, deferred ones included, through the view.
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

Sessions. The SDK hands handlers a per-request context, not a session object, so a
session is keyed by what the transport says: a stdio (or in-memory) pipe carries one
peer, and a stateful HTTP session has its ``Mcp-Session-Id`` header. The 2026-07-28 era
over HTTP, and ``--stateless`` HTTP, have no session: they see the registry's manifest,
and a found tool is still callable by name (search controls discovery, not access).
At most `MAX_SESSIONS` views are kept, least recently used first out.

Change propagation. `Registry.subscribe` marks the list dirty; one task then tells every
client, in both protocol eras: ``notifications/tools/list_changed`` to every handshake-era
session that sent a request, and ``ToolsListChanged`` on the ``subscriptions/listen``
bus for 2026-07-28 clients. Bursts (three servers mounting at once) coalesce into one
notice. A session whose search activated new tools is told the same way, alone.

Lifecycle. `serve` owns the registry: it answers the handshake at once and mounts the
config's servers in the background, but holds ``tools/list`` and ``tools/call`` until the
first mounts are done (many clients list once and never again); on SIGINT,
SIGTERM or stdin EOF stops the transport and closes every upstream server. A required
server that fails to mount stops the serving and raises `MountError`. Logs go to
stderr; while serving stdio, the SDK's ``stdio_server`` diverts fd 1 to stderr (we hand it
only stdin), so nothing but protocol
messages can reach stdout.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from importlib.metadata import version
from typing import Any, Final, Literal, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types
import uvicorn
from mcp import MCPError
from mcp.server import InitializationOptions, NotificationOptions, Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette

from mcpmount.config import RegistryConfig
from mcpmount.errors import MountError, RegistryError, UnknownToolError, UpstreamError
from mcpmount.registry import Registry, RegistryChange, View, read_pins

__all__ = ["MAX_SESSIONS", "RegistryServer", "Transport", "serve"]

logger = logging.getLogger(__name__)

Transport = Literal["stdio", "http"]

MAX_SESSIONS: Final = 1000
"""How many downstream sessions keep a view (and get list_changed) at once."""

_PIPE: Final = "<pipe>"
"""The session key of a transport without HTTP requests: it carries exactly one peer."""

_NOTIFY_TIMEOUT: Final = 2.0
"""How long one session gets to take a list_changed before it is dropped."""

_HTTP_SHUTDOWN_GRACE: Final = 2
"""Seconds uvicorn waits for open requests and streams before cutting them."""


class RegistryServer:
    """One MCP server whose tools are a registry's; build it, then run a transport.

    Args:
        registry: An entered registry; it is served, not owned.
        name: The ``serverInfo`` name downstream clients see.
    """

    def __init__(
        self, registry: Registry, *, name: str = "mcpmount", mounted: anyio.Event | None = None
    ) -> None:
        self.registry = registry
        self.mounted = mounted
        """Set once the initial mounts are done; ``tools/list`` and ``tools/call`` wait for it."""
        self.bus = InMemorySubscriptionBus()
        """The 2026-07-28 ``subscriptions/listen`` fan-out."""
        self.listen = ListenHandler(self.bus)
        self.server: Server[Any] = Server(
            name,
            version=version("mcpmount"),
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.listen,
        )
        self.server.middleware.append(self._track_session)
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()
        self._views: OrderedDict[str, View] = OrderedDict()
        self._dirty = anyio.Event()

    def initialization_options(self) -> InitializationOptions:
        """Return the handshake options: tools with ``listChanged``."""
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    # -- sessions -------------------------------------------------------------------------

    def _session_key(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        request = ctx.request
        if request is None:
            return _PIPE
        headers = getattr(request, "headers", None)
        if headers is None:
            return None
        session_id = cast("Mapping[str, str]", headers).get("mcp-session-id")
        return f"http:{session_id}" if session_id else None

    def _view(self, ctx: ServerRequestContext[Any, Any]) -> View | None:
        key = self._session_key(ctx)
        if key is None:
            return None
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = self.registry.view()
            while len(self._views) > MAX_SESSIONS:
                self._views.popitem(last=False)
        self._views.move_to_end(key)
        return view

    async def _track_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Remember each handshake-era session, to tell it when the list changes."""
        key = self._session_key(ctx)
        if key is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions[key] = ctx.session
            self._sessions.move_to_end(key)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return await call_next(ctx)

    # -- handlers -------------------------------------------------------------------------

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        try:
            return self.registry.get(name).definition.input_schema
        except UnknownToolError:
            return None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        await self._wait_mounted()
        view = self._view(ctx)
        tools = view.tools() if view is not None else self.registry.tools()
        return mcp_types.ListToolsResult(tools=tools)

    async def _wait_mounted(self) -> None:
        # Many clients list once and never again: the first list must hold every server
        # that comes up. The wait is bounded by the servers' startup timeouts.
        if self.mounted is not None:
            await self.mounted.wait()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        await self._wait_mounted()
        view = self._view(ctx)
        target = view if view is not None else self.registry
        activated = len(view.activated) if view is not None else 0

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        try:
            result = await target.call(params.name, params.arguments, progress=progress)
        except UnknownToolError as exc:
            raise MCPError(mcp_types.INVALID_PARAMS, str(exc)) from None
        except UpstreamError as exc:
            data = {"server": exc.server, "tool": exc.tool}
            raise MCPError(exc.code, exc.upstream_message, data) from None
        except RegistryError as exc:
            logger.info("call of %r failed: %s", params.name, exc)
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=str(exc))], is_error=True
            )
        if view is not None and len(view.activated) > activated:
            await self._tell_one(ctx)
        return _hop(result)

    # -- change propagation ---------------------------------------------------------------

    def _on_change(self, change: RegistryChange) -> None:
        self._dirty.set()

    async def propagate_changes(self) -> None:
        """Tell every client each time the registry changes; runs until cancelled."""
        unsubscribe = self.registry.subscribe(self._on_change)
        try:
            while True:
                await self._dirty.wait()
                self._dirty = anyio.Event()
                await self._tell_all()
        finally:
            unsubscribe()

    async def _tell_all(self) -> None:
        await self.bus.publish(ToolsListChanged())
        async with anyio.create_task_group() as tg:
            for key, session in list(self._sessions.items()):
                tg.start_soon(self._notify, key, session)

    async def _tell_one(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Tell the calling session (only) that its list grew."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # Only a pipe keeps a view at this era, and a pipe has one peer.
            await self.bus.publish(ToolsListChanged())
        else:
            await self._notify(self._session_key(ctx) or "", ctx.session)

    async def _notify(self, key: str, session: ServerSession) -> None:
        try:
            with anyio.fail_after(_NOTIFY_TIMEOUT):
                await session.send_tool_list_changed()
        except Exception as exc:  # a gone session: forget it, never fail the others
            logger.debug("dropped session %r: list_changed failed: %r", key, exc)
            if self._sessions.get(key) is session:
                del self._sessions[key]
                self._views.pop(key, None)

    # -- transports -----------------------------------------------------------------------

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until stdin ends."""
        async with (
            _stdin_lines() as lines,
            stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write),
        ):
            await self.server.run(read, write, self.initialization_options())

    def http_app(self, *, host: str = "127.0.0.1", stateless: bool = False) -> Starlette:
        """Return the streamable HTTP app (path ``/mcp``).

        On a loopback ``host`` the SDK's DNS-rebinding protection is on (allowed Host
        and Origin: 127.0.0.1, localhost, [::1], any port).
        """
        return self.server.streamable_http_app(host=host, stateless_http=stateless)

    async def run_http(
        self,
        stop: anyio.Event,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        stateless: bool = False,
        on_ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until ``stop`` is set.

        Args:
            stop: Set it to shut down gracefully (bounded by a short grace period).
            host: The address to bind; 127.0.0.1 by default.
            port: The port to bind; 0 lets the OS choose.
            stateless: A fresh transport per request, no session (for load balancers).
            on_ready: Called with the URL once the socket is bound and serving.

        Raises:
            OSError: The address cannot be bound.
        """
        sock = _bind(host, port)
        config = uvicorn.Config(
            self.http_app(host=host, stateless=stateless),
            log_config=None,  # the application configures logging
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=_HTTP_SHUTDOWN_GRACE,
        )
        server = _UvicornServer(config)
        bound_port: int = sock.getsockname()[1]
        shown_host = f"[{host}]" if ":" in host else host
        url = f"http://{shown_host}:{bound_port}/mcp"
        async with anyio.create_task_group() as tg:

            async def announce_then_stop() -> None:
                while not server.started:
                    await anyio.sleep(0.01)
                if on_ready is not None:
                    on_ready(url)
                await stop.wait()
                # Open listen streams would hold the graceful shutdown: end them first.
                self.listen.close()
                server.should_exit = True

            tg.start_soon(announce_then_stop)
            try:
                await server.serve(sockets=[sock])
            finally:
                sock.close()
                tg.cancel_scope.cancel()


def _hop(result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
    """Drop the upstream's ``serverInfo`` stamp: the SDK keeps a handler's own, and
    downstream the server is us. Every other ``_meta`` key passes through."""
    if not result.meta or SERVER_INFO_META_KEY not in result.meta:
        return result
    meta = {k: v for k, v in result.meta.items() if k != SERVER_INFO_META_KEY}
    return result.model_copy(update={"meta": meta or None})


class _UvicornServer(uvicorn.Server):
    """uvicorn, minus its signal handlers: `serve` owns the signals, and must close the
    upstream servers before the process exits (uvicorn would re-raise the signal)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    """Bind a listening socket ourselves: uvicorn calls sys.exit on a bind failure."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection. Without it a response written in pieces
        # meets the client's delayed ACK: each call took 44 ms instead of under 2 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)  # upstream servers spawned later must not hold it
    return sock


class _StdinLines:
    """Lines of stdin for `stdio_server`, read by a daemon thread.

    The SDK reads stdin in an anyio worker thread, which a cancel cannot interrupt: a
    SIGTERM while the client keeps stdin open would hang the shutdown until the next
    line. A daemon thread feeding a stream can be left behind, and never delays exit.
    """

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[str](0)

    def start(self) -> None:
        token = anyio.lowlevel.current_token()
        thread = threading.Thread(
            target=self._read, args=(token,), name="mcpmount stdin", daemon=True
        )
        thread.start()

    def _read(self, token: anyio.lowlevel.EventLoopToken) -> None:
        stdin = sys.stdin.buffer
        try:
            while line := stdin.readline():
                text = line.decode("utf-8", errors="replace")
                anyio.from_thread.run(self._send.send, text, token=token)
        except Exception:  # the loop ended (RunFinishedError) or the stream was closed
            return
        try:
            anyio.from_thread.run_sync(self._send.close, token=token)
        except Exception:
            return

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._receive.close()


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncGenerator[_StdinLines]:
    lines = _StdinLines()
    lines.start()
    try:
        yield lines
    finally:
        lines.close()


async def serve(
    config: RegistryConfig,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 0,
    stateless: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve every server of ``config`` as one MCP server until told to stop.

    Answers the handshake at once and mounts the servers in the background; the first
    ``tools/list`` waits for those mounts, and every later change (a server's tools
    re-listed, restarted) is a list change the clients are told about. Honours the lock
    file beside the config. Returns on SIGINT, SIGTERM or (stdio) stdin EOF, after closing
    every upstream server.

    Args:
        config: The loaded config.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``/mcp``).
        host: HTTP only: the address to bind.
        port: HTTP only: the port (0: the OS chooses; see ``on_ready``).
        stateless: HTTP only: no sessions, for replicas behind a load balancer.
        on_ready: HTTP only: called with the URL once serving.

    Raises:
        MountError: A required server failed to mount; everything was closed first.
        OSError: The HTTP address cannot be bound.
    """
    failure: MountError | None = None
    stop = anyio.Event()
    mounted = anyio.Event()
    async with Registry(config.settings, pins=read_pins(config)) as registry:
        served = RegistryServer(registry, mounted=mounted)
        async with anyio.create_task_group() as tg:

            async def mount() -> None:
                nonlocal failure
                try:
                    await registry.mount_all(config.servers)
                except MountError as exc:
                    failure = exc
                    stop.set()
                else:
                    tools = registry.mounted_tools()
                    logger.info("serving %d tools of %d servers", len(tools), len(config.servers))
                finally:
                    mounted.set()

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        logger.info("%s: closing every server", signal.Signals(signum).name)
                        stop.set()
                        return

            tg.start_soon(served.propagate_changes)
            tg.start_soon(mount)
            tg.start_soon(stop_on_signal)
            if transport == "stdio":
                async with anyio.create_task_group() as stdio:

                    async def cancel_on_stop() -> None:
                        await stop.wait()
                        stdio.cancel_scope.cancel()

                    stdio.start_soon(cancel_on_stop)
                    await served.run_stdio()
                    stdio.cancel_scope.cancel()
            else:
                await served.run_http(
                    stop, host=host, port=port, stateless=stateless, on_ready=on_ready
                )
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


def write_portfile(path: str | os.PathLike[str], url: str) -> None:
    """Write the port of ``url`` to ``path`` atomically (for scripts that bind port 0)."""
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w") as f:
        f.write(port + "\n")
    os.replace(tmp, path)
