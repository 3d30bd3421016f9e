"""How a connection reaches its server: the only package that knows stdio, HTTP and SSE details.

`transport_for` picks the kind a spec names; every kind is a `ServerTransport`, so the
code above never branches on the kind.
"""

from mcpmount.transports._auto import AutoTransport
from mcpmount.transports._base import Diagnostics, ServerTransport, leaves
from mcpmount.transports._factory import transport_for
from mcpmount.transports._http import HttpTransport
from mcpmount.transports._memory import MemoryTransport
from mcpmount.transports._procgroup import group_members
from mcpmount.transports._reaper import Reaper
from mcpmount.transports._sse import SseTransport
from mcpmount.transports._stdio import StdioTransport

__all__ = [
    "AutoTransport",
    "Diagnostics",
    "HttpTransport",
    "MemoryTransport",
    "Reaper",
    "ServerTransport",
    "SseTransport",
    "StdioTransport",
    "group_members",
    "leaves",
    "transport_for",
]
