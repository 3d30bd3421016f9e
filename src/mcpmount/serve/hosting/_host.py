"""`Host`: a front on a transport, and what operators read beside it.

A `RegistryServer` answers MCP; a `Host` puts it on stdio or streamable HTTP (uvicorn,
`mcpmount.serve.hosting._runners`) and serves, beside ``/mcp``, ``/healthz`` and ``/readyz``
(`Readiness`, `mcpmount.serve.ops`) and ``/metrics`` (`Metrics`), behind what the
security settings say of who reads them (`mcpmount.serve.ops`). The request path
is the tree's: transport (here) → access (`mcpmount.serve.access`: the bearer check, then the
principal every answer is cut to) → front (`mcpmount.serve.front`) → registry.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from starlette.applications import Starlette
from starlette.routing import Route

from mcpmount.config import ServeSettings
from mcpmount.serve.access import HttpSecurity, app_security
from mcpmount.serve.front import RegistryServer
from mcpmount.serve.hosting._left_calls import LeftCalls
from mcpmount.serve.hosting._runners import run_http, run_stdio
from mcpmount.serve.hosting._session_ends import SessionEnds
from mcpmount.serve.hosting._stopping import Stopping
from mcpmount.serve.ops import Metrics, Ops, Readiness, mounts_done, required_servers_up

__all__ = ["Host"]


class Host:
    """A front on a transport, with its health and metrics.

    Args:
        front: The MCP front to serve.
        stopping: How a stop of HTTP serving goes (`Stopping`); by default the ``[serve]``
            table's defaults (``drain``, ``stop_timeout``).
    """

    def __init__(self, front: RegistryServer, stopping: Stopping | None = None) -> None:
        self.front = front
        self.stopping = stopping or Stopping.configured(ServeSettings())
        """The graceful stop of HTTP serving; ``/readyz`` fails once it drains."""
        startup = front.startup
        self.readiness = Readiness()
        """What ``/readyz`` checks (`mcpmount.serve.ops`); more with
        ``readiness.add``."""
        self.readiness.add("mounts", mounts_done(startup.mounted if startup is not None else None))
        self.readiness.add("servers", required_servers_up(front.registry))
        self.readiness.add("stopping", self.stopping.readiness)
        self.metrics = Metrics(front.registry)
        """What ``/metrics`` serves (`mcpmount.serve.ops`)."""
        self.routes: list[Route] = []
        """More routes beside ``/mcp`` (``/oauth/callback``), served without a token."""

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until stdin ends.

        Over stdio there is no ``/metrics`` to serve: `metrics` stops counting."""
        self.metrics.stop_counting()
        await run_stdio(self.front.server, self.front.initialization_options())

    def http_app(self, security: HttpSecurity | None = None) -> Starlette:
        """Return the streamable HTTP app (path ``/mcp``; ``/healthz``, ``/readyz``, ``/metrics``).

        ``security`` is the ``[serve]`` settings made ready to serve (`HttpSecurity.build`);
        None: the defaults (no tokens, bound to loopback). On a loopback ``host`` the SDK's
        DNS-rebinding protection is on (allowed Host and Origin: 127.0.0.1, localhost,
        [::1], any port); it guards ``/mcp`` only. ``security`` adds bearer tokens on
        ``/mcp`` and allowed hosts (`mcpmount.serve.access`), and says who reads
        ``/metrics`` (served here or not) and ``/readyz``'s reasons (`mcpmount.serve.ops`).
        A session's DELETE waits for what its client posted just before it
        (`SessionEnds`); a session's call whose client closed its stream is cancelled
        ``resume_window`` seconds later, unless it was answered (`LeftCalls`). Every
        request passes the graceful stop (`Stopping`) first.

        With ``json_response`` every request is answered with one JSON body, never a
        stream. A proxy can then replay a call whose replica died under it (nothing of its
        answer had gone out), in the handshake era too, whose answers are otherwise streams
        begun before the call runs. The cost: whatever a server sends during a call
        (progress, log messages, questions) cannot reach the client of that call.
        """
        settings = security.settings if security is not None else ServeSettings()
        app = self.front.server.streamable_http_app(
            host=settings.host,
            stateless_http=settings.stateless,
            json_response=settings.json_response,
            custom_starlette_routes=[
                *Ops(self.readiness, self.metrics, security).routes(),
                *self.routes,
            ],
            **app_security(security, settings.host),
        )
        app.add_middleware(SessionEnds, on_end=self.front.registry.end_client)
        # Its cancel meets all below.
        app.add_middleware(LeftCalls, window=settings.resume_window)
        app.add_middleware(self.stopping.middleware)  # added last: it runs first
        return app

    async def run_http(
        self,
        stop: anyio.Event,
        security: HttpSecurity | None = None,
        *,
        on_ready: Callable[[str], None] | None = None,
        on_metrics_ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until ``stop`` is set.

        Where and how is ``security``'s settings (the ``[serve]`` table's ``host``,
        ``port``, ``stateless``, ``json_response``, ``resume_window``; see `http_app`). With
        its metrics port, ``/metrics`` is also served on a listener of its own (nothing
        else is there), opened and closed with the main one.

        Args:
            stop: Set it to stop gracefully, as `Stopping` says (drain, close, finish, cut).
            security: The ``[serve]`` settings made ready to serve (`HttpSecurity.build`);
                None: the defaults, but on port 0 (the OS chooses; see ``on_ready``): a
                front served in-process without settings (a test, an embedding) has no
                port known in advance to claim.
            on_ready: Called with the URL once the socket is bound and serving.
            on_metrics_ready: Called with the metrics listener's URL once it serves,
                before ``on_ready``.

        Raises:
            OSError: An address cannot be bound.
        """
        if security is None:
            security = HttpSecurity.build(ServeSettings(port=0))
        ops = Ops(self.readiness, self.metrics, security)
        await run_http(
            self.http_app(security),
            stop,
            host=security.settings.host,
            port=security.settings.port,
            on_ready=ops.announcing(on_ready),
            # Open listen streams would hold the graceful shutdown: end them first.
            before_shutdown=self.front.close_streams,
            stopping=self.stopping,
            beside=ops.endpoints(on_metrics_ready),
        )
