"""Gates: what a call passes on its way to a server, and its result on the way back.

- `Interception` (``_intercept``): each tool's plan of hooks, worked out once per tool and
  again only when what it depends on changes, in a fixed order: the host's interceptors,
  the secret guard, ``before_call``, approval; results through the host's after hooks, then
  the redaction.
- `SecretGuard` (``_secrets``): every secret of every mounted server and whose it is; a
  request carrying another server's is refused, anything a server says is redacted.
- `ProgramGate` (``_before_call``): a server's ``before_call`` program allows or refuses
  (a tool call, a prompt get, a resource read, a completion).
- `guarded_handlers` (``_handlers``): what servers ask and log, redacted; answers carrying
  another server's secret, refused. ``_redaction``: the redaction of any message.
- `ApprovalGate` (``_approval``): the approval policy's gates, asked last.

The registry owns one `Interception`; this room imports nothing of the registry.
"""

from mcpmount.gates._approval import ApprovalGate, needs_approval, seek_approval, warn_unmatched
from mcpmount.gates._before_call import ProgramGate
from mcpmount.gates._handlers import guarded_handlers
from mcpmount.gates._intercept import Interception, Plan
from mcpmount.gates._secrets import Mounted, SecretGuard

__all__ = [
    "ApprovalGate",
    "Interception",
    "Mounted",
    "Plan",
    "ProgramGate",
    "SecretGuard",
    "guarded_handlers",
    "needs_approval",
    "seek_approval",
    "warn_unmatched",
]
