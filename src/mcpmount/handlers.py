"""What the registry asks of its host: the client side of MCP, and approval of calls.

An upstream server may ask its client for things mid-session: a model completion
(sampling), input from the user (elicitation), the roots it may work in. mcpmount is that
client, and the host answers through `ClientHandlers` (an agent's own code, or ``mcpmount
serve`` relaying to its downstream client). A capability is offered upstream only when its
handler is given (roots also when the config gives a server ``roots``, which answer when
no handler can), so the defaults are the safe ones: no sampling, no elicitation, no roots.
Upstream log messages go to Python `logging` unless a log handler is given.

An `Approver` sees every call that a gate holds (a server's ``approve`` globs, or the
registry's ``approval`` policy) before the server does; a denied call never reaches it.
An `Interceptor` sees every call: its arguments before they are sent (to let them through,
rewrite or refuse them) and its result before the caller gets it (to keep or rewrite it);
one that asks (`Interceptor.kinds`) sees prompt gets, resource reads and completions too.

Every handler is told who asks (`Asker`): the server, and the tool call in flight when
that can be told. A handler that raises answers the server with an error (an
``mcp.MCPError`` with its own code and message; anything else as an internal error naming
only the exception's type), is logged, and never breaks the connection. A handler still
running when its call ends (timeout or cancellation) is cancelled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types

__all__ = [
    "REQUEST_KINDS",
    "AfterCall",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "Asker",
    "BeforeCall",
    "ClientHandlers",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "Interceptor",
    "LogHandler",
    "RootsHandler",
    "SamplingHandler",
    "ToolCall",
]


@dataclass(frozen=True, slots=True)
class Asker:
    """Who asks: a server, and the call it asks during, when that can be told."""

    server: str
    """The namespace of the asking server."""

    tool: str | None = None
    """What was asked for when the server asked, or None when unknown: the public name of
    the tool being called (`Registry.call`) or of the prompt being got
    (`Registry.get_prompt`), or the registry URI of the resource being read
    (`Registry.read_resource`). In the 2026-07-28 era a server asks within a request's
    result, so this is always known; in the handshake era it asks on the side, and it is
    known when that server has exactly one such request in flight (None for a question
    outside any, or with several in flight)."""

    context: object | None = None
    """What the caller passed as ``context=`` to `Registry.call` (or `get_prompt`,
    `read_resource`) for that request."""


SamplingHandler = Callable[
    [Asker, mcp_types.CreateMessageRequestParams],
    Awaitable[
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ],
]
"""Answers ``sampling/createMessage``: a model completion, or an error to refuse."""

ElicitationHandler = Callable[
    [Asker, mcp_types.ElicitRequestParams],
    Awaitable[mcp_types.ElicitResult | mcp_types.ErrorData],
]
"""Answers ``elicitation/create`` (form or URL mode): accept, decline or cancel."""

ElicitationCompleteHandler = Callable[[str, str], Awaitable[None]]
"""Takes a server's namespace and the ``elicitationId`` of a URL-mode elicitation that it
says is complete (``notifications/elicitation/complete``, a handshake-era notice: the
2026-07-28 era has none). It runs on the connection's receive loop: keep it short."""

RootsHandler = Callable[[Asker], Awaitable[mcp_types.ListRootsResult | mcp_types.ErrorData | None]]
"""Answers ``roots/list``; None when it cannot tell (no client to ask, or one without
roots): the server is then told its configured ``roots``, or none."""

LogHandler = Callable[[str, mcp_types.LoggingMessageNotificationParams], Awaitable[None]]
"""Takes an upstream server's log message; the first argument is its namespace."""


@dataclass(frozen=True, slots=True)
class ClientHandlers:
    """The host's answers to what upstream servers ask; each one is optional."""

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: RootsHandler | None = None
    elicitation_complete: ElicitationCompleteHandler | None = None
    """Default: the notice is dropped. Only useful beside ``elicitation``."""
    logging: LogHandler | None = None
    """Default: Python `logging`, logger ``mcpmount.server.<namespace>``. Either way the
    message is redacted with the server's secrets first."""

    sampling_capability: mcp_types.SamplingCapability | None = None
    """What the sampling handler supports beyond plain messages (e.g. ``tools``), offered
    upstream with it; a relay passes on its own client's. Ignored without ``sampling``."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One gated call, held until an approver answers."""

    server: str
    tool: str
    """The public name."""
    raw_name: str
    """The name the server knows the tool by (what ``approve`` globs match)."""
    arguments: Mapping[str, Any]
    """A read-only copy, taken before asking: exactly what is sent if the call is allowed."""
    context: object | None = None
    """What the caller passed as ``context=`` to `Registry.call`."""


@dataclass(frozen=True, slots=True)
class Approval:
    """An approver's answer; on a denial the model sees ``reason``."""

    allowed: bool
    reason: str = ""

    @classmethod
    def allow(cls) -> Approval:
        return cls(True)

    @classmethod
    def deny(cls, reason: str) -> Approval:
        return cls(False, reason)


Approver = Callable[[ApprovalRequest], Awaitable[Approval]]
"""Decides a gated call; raising counts as a denial. Its wait is not bounded by the call's
timeout (a person may take a while), which starts once the call is approved; cancelling
the call cancels the approver."""


REQUEST_KINDS = frozenset({"tools/call", "prompts/get", "resources/read", "completion/complete"})
"""The requests that carry text to a server, which `Interceptor.kinds` may name."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call (or, for an interceptor that asks for them, another request) on its
    way to a server, as interceptors see it."""

    server: str
    tool: str
    """The public name: of the tool, of the prompt (``prompts/get``), the registry URI
    (``resources/read``) or what is completed (``completion/complete``)."""
    raw_name: str
    """The name (or URI) the server knows it by."""
    arguments: Mapping[str, Any]
    """A read-only copy of what is sent (after the hooks before this one); in an ``after``
    hook, what was sent. A prompt's arguments; ``{"uri": ...}`` for a read;
    ``{"ref": ..., "argument": ..., "context": ...}`` for a completion."""
    context: object | None = None
    """What the caller passed as ``context=`` to `Registry.call` (or `get_prompt`,
    `read_resource`)."""
    kind: str = "tools/call"
    """The request: ``tools/call``, ``prompts/get``, ``resources/read`` or
    ``completion/complete``."""


BeforeCall = Callable[[ToolCall], Awaitable[Mapping[str, Any] | Approval | None]]
"""Sees a call before it is sent. Returns None (or `Approval.allow()`) to let it through
as it is, other arguments to send instead, or `Approval.deny(reason)` to refuse it: the
caller gets ``CallDeniedError`` with ``reason``, and the server never sees the call.
Raising refuses it too (logged; the caller is told only the exception's type)."""

AfterCall = Callable[
    [ToolCall, mcp_types.CallToolResult], Awaitable[mcp_types.CallToolResult | None]
]
"""Sees the result of a call that ran. Returns the result to give the caller instead, or
None to keep it. Raising withholds it: the caller gets ``ResultWithheldError``."""


@dataclass(frozen=True, slots=True)
class Interceptor:
    """Hooks around every tool call of a registry (``tool_search`` excepted); either may
    be left out.

    ``before`` hooks run in the order the interceptors were given, each seeing the
    arguments the one before returned; ``after`` hooks run in the reverse order. The
    registry's own checks run inside them: a call's arguments pass the secret guard, the
    server's ``before_call`` program and its approval gate after every ``before`` hook,
    and a result has every known secret redacted after every ``after`` hook.
    """

    before: BeforeCall | None = None
    after: AfterCall | None = None
    name: str = "an interceptor"
    """What logs and refusals call it."""
    kinds: frozenset[str] = frozenset({"tools/call"})
    """The requests whose ``before`` hook runs (`REQUEST_KINDS`): by default tool calls
    only, so a hook written for them never sees another request. For the others
    (``prompts/get``, ``resources/read``, ``completion/complete``) the hook may let the
    request through or refuse it (`ToolCall.kind` says which); other arguments it returns
    are not taken, and ``after`` runs for tool calls only."""
