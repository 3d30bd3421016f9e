"""The operator's side of serve: is it alive, should it get traffic, what it did.

- `Readiness` (``_health``): ``/healthz`` and ``/readyz``, named checks, required or not.
- `Metrics` (``_metrics``): Prometheus metrics of the served registry, at ``/metrics``.
- `Ops` (``_endpoints``): those routes on the MCP port or an `Endpoint` of their own, and
  who may read them (`OpsAccess`: names of servers and tools are not for every token).
- `publish_status` (``_status_socket``): the unix socket, this user's alone, on which a
  running serve answers ``mcpmount status CONFIG`` (`status_sockets` finds each).

Above access (who is asking) and below hosting, which puts these endpoints beside ``/mcp``.
"""

from mcpmount.config import warn_deprecated
from mcpmount.serve.ops._endpoints import Endpoint, Ops, OpsAccess
from mcpmount.serve.ops._health import (
    Readiness,
    Reason,
    health_routes,
    mounts_done,
    required_servers_up,
)
from mcpmount.serve.ops._metrics import Metrics
from mcpmount.serve.ops._status_socket import publish_status, served_status, status_sockets

__all__ = [
    "Endpoint",
    "Metrics",
    "Ops",
    "OpsAccess",
    "Readiness",
    "Reason",
    "health_routes",
    "mounts_done",
    "publish_status",
    "required_servers_up",
    "served_status",
    "status_sockets",
]


def __getattr__(name: str) -> object:
    """Old names still resolve, with a warning, so that code written against them runs on.

    `Listener` became `Endpoint`: a listener is a change callback (`mcpmount.catalog`).
    """
    if name == "Listener":
        warn_deprecated("mcpmount.serve.ops.Listener is renamed Endpoint; import that instead")
        return Endpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
