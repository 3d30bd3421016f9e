"""The operator's endpoints of HTTP ``serve``, and who reads them.

``/healthz`` names nothing and answers anyone. ``/metrics`` and the reasons ``/readyz``
gives name every server and tool, which a token limited to some namespaces must not learn,
so with authentication on they are for the operator (`OpsAccess`):

- ``/metrics`` answers the metrics token alone when there is one (``[serve]
  metrics_token``), wherever it is served. It is served on a listener of its own when
  ``metrics_port`` is set (Prometheus' convention: node_exporter's 9100), and then not on
  the MCP port (unless the metrics token guards it there). Without either, it is on the
  MCP port only when serve needs no authentication: whoever reaches that port may call
  every tool anyway. Where it is not served, ``/metrics`` is answered as any unknown path.
- ``/readyz`` answers everyone with the same status; its reasons in full go to a token that
  sees every namespace (accepted by the same verifier as ``/mcp``, with OAuth's required
  scopes) or to the metrics token, and the others read what each check says to anyone
  (`mcpmount.serve.ops._health.Reason`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from mcpmount.config import ServeSettings, ServeToken
from mcpmount.serve.access import Grant, HttpSecurity, StaticTokens
from mcpmount.serve.ops._health import Readiness, health_routes
from mcpmount.serve.ops._metrics import Metrics

__all__ = ["Endpoint", "Ops", "OpsAccess"]

logger = logging.getLogger(__name__)


class OpsAccess:
    """Who reads ``/metrics`` and ``/readyz``'s reasons, and where the metrics are served.

    Args:
        security: What protects HTTP serve; None: nothing (the SDK's defaults).
    """

    def __init__(self, security: HttpSecurity | None) -> None:
        settings = security.settings if security is not None else ServeSettings()
        self.authenticated = settings.authenticated
        """Whether clients must present a token."""
        self.metrics_port = settings.metrics_port
        """The metrics listener's port; None: no such listener."""
        self.metrics_host = settings.metrics_host
        """The metrics listener's address."""
        token = settings.metrics_token
        # One static token: compared as a digest in constant time, as /mcp's are.
        self._metrics_token = (
            StaticTokens({"metrics": ServeToken(token=token)}, []) if token is not None else None
        )
        self._scopes = frozenset(settings.oauth.scopes if settings.oauth is not None else ())

    @property
    def metrics_on_mcp_port(self) -> bool:
        """Whether the MCP port serves ``/metrics`` (to the metrics token, if there is one)."""
        if self._metrics_token is not None:
            return True
        return self.metrics_port is None and not self.authenticated

    def where_metrics_are(self, mcp_url: str, metrics_url: str | None) -> str:
        """Where ``/metrics`` is served and to whom, in a sentence.

        Args:
            mcp_url: The URL of ``/mcp``.
            metrics_url: The metrics listener's URL; None: there is none.
        """
        places = [mcp_url.removesuffix("/mcp") + "/metrics"] if self.metrics_on_mcp_port else []
        places += [metrics_url] if metrics_url is not None else []
        if not places:
            return (
                "/metrics is not served: with authentication on it is not on the MCP port; "
                "set [serve] metrics_port or metrics_token (--metrics-port, --metrics-token-env)"
            )
        who = "anyone who reaches it" if self._metrics_token is None else "the metrics token only"
        return f"metrics are served at {' and '.join(places)} to {who}"

    async def may_read_metrics(self, request: Request) -> bool:
        """Whether ``request`` may read the metrics where they are served."""
        return self._metrics_token is None or await self._holds_metrics_token(request)

    async def may_read_reasons(self, request: Request) -> bool:
        """Whether ``request`` may read why ``/readyz`` fails (the names in it)."""
        if not self.authenticated:
            return True
        user = request.scope.get("user")  # set by the SDK's bearer middleware, as for /mcp
        if isinstance(user, AuthenticatedUser):
            grant = user.access_token
            sees_all = isinstance(grant, Grant) and grant.namespaces is None
            if sees_all and self._scopes <= set(grant.scopes):
                return True
        return self._metrics_token is not None and await self._holds_metrics_token(request)

    async def _holds_metrics_token(self, request: Request) -> bool:
        if self._metrics_token is None:
            return False
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return await self._metrics_token.verify_token(token) is not None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An app served on an address of its own, beside the main one and for as long."""

    app: Starlette
    host: str
    """The address to bind."""
    port: int
    """The port to bind; 0 lets the OS choose."""
    path: str
    """The path the announced URL names (``/metrics``)."""
    on_ready: Callable[[str], None] | None = None
    """Called with the URL once every endpoint is bound and serving."""


class Ops:
    """The operator's endpoints of one HTTP serve: routes for the MCP app, the metrics
    endpoint, and a log line saying where the metrics are.

    Args:
        readiness: What ``/readyz`` checks.
        metrics: What ``/metrics`` serves.
        security: What protects HTTP serve, the metrics' port and token included.
    """

    def __init__(
        self, readiness: Readiness, metrics: Metrics, security: HttpSecurity | None
    ) -> None:
        self._readiness = readiness
        self._metrics = metrics
        self.access = OpsAccess(security)
        self._metrics_url: str | None = None

    def routes(self) -> list[Route]:
        """``/healthz``, ``/readyz`` and (where `OpsAccess` says so) ``/metrics``, for the
        MCP app."""
        routes = health_routes(self._readiness, self.access.may_read_reasons)
        if self.access.metrics_on_mcp_port:
            routes.append(self._metrics.route(self.access.may_read_metrics))
        return routes

    def endpoints(self, on_ready: Callable[[str], None] | None) -> list[Endpoint]:
        """The metrics endpoint (``/metrics`` only), if there is a metrics port; ``on_ready``
        gets its URL once it serves."""
        port = self.access.metrics_port
        if port is None:
            return []

        def ready(url: str) -> None:
            self._metrics_url = url
            if on_ready is not None:
                on_ready(url)

        app = Starlette(routes=[self._metrics.route(self.access.may_read_metrics)])
        return [Endpoint(app, self.access.metrics_host, port, "/metrics", ready)]

    def announcing(self, on_ready: Callable[[str], None] | None) -> Callable[[str], None]:
        """``on_ready`` of the MCP URL, after logging where the metrics are served."""

        def ready(url: str) -> None:
            logger.info("%s", self.access.where_metrics_are(url, self._metrics_url))
            if on_ready is not None:
                on_ready(url)

        return ready
