"""How a connection reaches its server: the only package that knows stdio, HTTP and SSE details.

`transport_for` (``_factory``) picks the kind a spec names; every kind is a
`ServerTransport` (``_base``, with its `Diagnostics`), so the code above never branches on
the kind. What one message may hold is checked on its bytes first (`MessageLimits`,
``_limits``).

- stdio: `StdioTransport` (``_stdio``) runs the server as a process group of
  `mcpmount.processes`; ``_stdio_pipes`` reads its stdout into messages, bounded, writes
  its stdin and drains its stderr.
- URLs share one HTTP client and how its failures read (``_http_client``), bodies metered
  to the limits as they are read (``_http_metering``), and headers from a program
  (``headers_command``: ``_headers_command``). Streamable HTTP (`HttpTransport`,
  ``_http``) renews an expired session (``_http_session``) and opens no GET stream for a
  server without one (``_http_get``); legacy SSE (`SseTransport`, ``_sse``) posts each
  message bounded (``_sse_posts``); ``transport = "auto"`` (`AutoTransport`, ``_auto``)
  tries the first, then the second.
- `MemoryTransport` (``_memory``) runs an SDK server in this process: a seam for tests.
"""

from mcpmount.transports._auto import AutoTransport
from mcpmount.transports._base import Diagnostics, ServerTransport, leaves
from mcpmount.transports._factory import transport_for
from mcpmount.transports._http import HttpTransport
from mcpmount.transports._memory import MemoryTransport
from mcpmount.transports._sse import SseTransport
from mcpmount.transports._stdio import StdioTransport

__all__ = [
    "AutoTransport",
    "Diagnostics",
    "HttpTransport",
    "MemoryTransport",
    "ServerTransport",
    "SseTransport",
    "StdioTransport",
    "leaves",
    "transport_for",
]
