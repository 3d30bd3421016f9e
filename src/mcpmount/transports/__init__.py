"""From a server spec to an SDK transport: the only package that knows stdio and HTTP details."""

from mcpmount.transports._http import TransportState, open_transport
from mcpmount.transports._stdio import (
    STDIN_GRACE,
    SWEEP_GRACE,
    TERM_GRACE,
    ProcessHandle,
    group_members,
    stdio_transport,
)

__all__ = [
    "STDIN_GRACE",
    "SWEEP_GRACE",
    "TERM_GRACE",
    "ProcessHandle",
    "TransportState",
    "group_members",
    "open_transport",
    "stdio_transport",
]
