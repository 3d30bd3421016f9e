"""Requests on their way to the server that owns what they name: tool calls, prompts, resources.

``_calls``: one tool call (its arguments checked, its interceptors passed, its timeout a
deadline). ``_library``: prompt and resource requests, and the listeners of every table.
"""

from mcpmount.registry.requests._calls import (
    call_tool,
    call_within,
    check_arguments,
    redacted_error,
)
from mcpmount.registry.requests._library import (
    LibraryRequests,
    UpdateListener,
    send_to,
    subscribe_all,
)

__all__ = [
    "LibraryRequests",
    "UpdateListener",
    "call_tool",
    "call_within",
    "check_arguments",
    "redacted_error",
    "send_to",
    "subscribe_all",
]
