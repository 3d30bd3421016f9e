"""Hosting: a front on a transport, for as long as it is served.

- `serve` (``_run``): the lifecycle of a served config: mounts in the background,
  signals, reloads (``_reloading``), shared state, the transport, the status socket; its
  keywords of before ``[serve]`` held its settings, still read (``_keywords``).
- `Host` (``_host``): a front on stdio (its wire: ``_stdio``) or streamable HTTP
  (uvicorn, ``_runners``; what a POST's body holds: ``_bodies``), with the operator's
  endpoints beside ``/mcp`` (`mcpmount.serve.ops`); a session's DELETE after what its
  client sent before it (``_session_ends``), a call whose client left its stream
  cancelled after a bound (``_left_calls``), and a stop that loses no call
  (``_stopping``).
"""

from mcpmount.serve.hosting._host import Host
from mcpmount.serve.hosting._run import Transport, serve
from mcpmount.serve.hosting._runners import write_portfile

__all__ = ["Host", "Transport", "serve", "write_portfile"]
