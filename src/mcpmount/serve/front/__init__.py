"""The MCP front: a registry answered as one MCP server, in both protocol eras.

- `RegistryServer` (``_server``) and `open_front`: the SDK's low-level server over a
  registry, advertising the change notices and tasks it serves (``_low_level``). Every
  request passes the `Gate` (``_gate``) first, which refuses what the request's
  principal may not see (`mcpmount.serve.access`); the handlers answer lists and
  searches (``_lists``, ``_call_tool``), calls, prompts, resources and completions
  (``_content``), and ``run_code``'s programs (``_code``); resource subscriptions, list
  changes and log levels go to the session's own room (`mcpmount.serve.sessions`), which
  tells each session only what it may see.
- What upstream servers ask mid-request is relayed to the client of that request
  (`mcpmount.serve.relay`).
- Where each conversation's finds are kept (``_activations``), the first answers' wait for
  the initial mounts (``_startup``), the servers that failed and are retried
  (``_retries``), requests the SDK cannot parse (``_screen``), and the SDK's span of a
  request, only when it can matter (``_spans``).
"""

from mcpmount.serve.front._activations import ActivationStore, InMemoryActivations
from mcpmount.serve.front._call_tool import CALL_TOOL_NAME
from mcpmount.serve.front._retries import Retries
from mcpmount.serve.front._screen import screen
from mcpmount.serve.front._server import RegistryServer, open_front
from mcpmount.serve.front._startup import Startup, mount_initial

__all__ = [
    "CALL_TOOL_NAME",
    "ActivationStore",
    "InMemoryActivations",
    "RegistryServer",
    "Retries",
    "Startup",
    "mount_initial",
    "open_front",
    "screen",
]
