"""How a connection reaches its server: the only package that knows stdio, HTTP and SSE details.

`transport_for` picks the kind a spec names; every kind is a `ServerTransport`, so the
code above never branches on the kind. A stdio server runs as a process group of
`mcpmount.processes`.
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
