"""How a connection reaches its server: the only package that knows stdio, HTTP and SSE details.

`transport_for` picks the kind a spec names; every kind is a `ServerTransport`, so the
code above never branches on the kind. `run_program` runs a short-lived helper program
(``headers_command``, ``before_call``) bounded and reaped.
"""

from mcpmount.transports._auto import AutoTransport
from mcpmount.transports._base import Diagnostics, ServerTransport, leaves
from mcpmount.transports._factory import transport_for
from mcpmount.transports._http import HttpTransport
from mcpmount.transports._memory import MemoryTransport
from mcpmount.transports._procgroup import group_members
from mcpmount.transports._program import ProgramRun, first_line, run_program
from mcpmount.transports._reaper import Reaper
from mcpmount.transports._sse import SseTransport
from mcpmount.transports._stdio import StdioTransport

__all__ = [
    "AutoTransport",
    "Diagnostics",
    "HttpTransport",
    "MemoryTransport",
    "ProgramRun",
    "Reaper",
    "ServerTransport",
    "SseTransport",
    "StdioTransport",
    "first_line",
    "group_members",
    "leaves",
    "run_program",
    "transport_for",
]
