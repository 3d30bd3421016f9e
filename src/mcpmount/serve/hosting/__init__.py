"""Hosting and operations: a front on a transport, for as long as it is served.

- `serve` (``_run``): the lifecycle of a served config: mounts in the background,
  signals, reloads (``_reloading``), shared state, the transport.
- `Host` (``_host``): a front on stdio or streamable HTTP (uvicorn, ``_runners``), with
  ``/healthz`` and ``/readyz`` (`Readiness`, ``_health``) and ``/metrics`` (``_metrics``),
  read by whom the settings say (``_ops``); a session's DELETE after what its client sent
  before it (``_session_ends``), and a call whose client left its stream cancelled after
  a bound (``_left_calls``).
- `status_sockets` (``_status_socket``): where ``mcpmount status CONFIG`` finds each running
  serve of that config, which answers there with its servers' status.
"""

from mcpmount.serve.hosting._health import Readiness
from mcpmount.serve.hosting._host import Host
from mcpmount.serve.hosting._run import Transport, serve
from mcpmount.serve.hosting._runners import write_portfile
from mcpmount.serve.hosting._status_socket import status_sockets

__all__ = ["Host", "Readiness", "Transport", "serve", "status_sockets", "write_portfile"]
