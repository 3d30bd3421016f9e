"""The failures of one call (a tool's, or a prompt get, a resource read, a completion), each
saying whether the server saw it.

A caller must know whether to call again: an error raised before sending says "nothing was
sent"; one raised after says the outcome is unknown, or that the tool ran. A tool that ran
and reported ``isError`` is not among them: it is a result the model must see.
"""

from __future__ import annotations

from mcpmount.errors._servers import ServerError

__all__ = [
    "ArgumentsError",
    "CallDeniedError",
    "CallError",
    "CallTimeoutError",
    "ClientSessionsFullError",
    "NotSupportedError",
    "ResultTooLargeError",
    "ResultWithheldError",
    "SecretRefusedError",
    "ServerCrashedError",
    "ServerNotRunningError",
    "ToolRemovedError",
    "UpstreamError",
]


class ServerNotRunningError(ServerError):
    """Raised when a call reaches a server that crashed or was closed; nothing was sent."""

    def __init__(self, server: str, tool: str, reason: str, *, kind: str = "tool") -> None:
        self.tool = tool
        self.kind = kind
        what = repr(tool) if kind == "tool" else f"{kind} {tool!r}"
        super().__init__(server, f"cannot call {what}: the server is not running ({reason})")


class CallError(ServerError):
    """Base class of the registry's failures while calling one tool.

    Also raised for a prompt get, a resource read or a completion: ``kind`` says which
    (``"tool"``, ``"prompt"``, ``"resource"``), and ``tool`` holds its public name or URI.
    """

    def __init__(self, server: str, tool: str, message: str, *, kind: str = "tool") -> None:
        self.tool = tool
        self.kind = kind
        super().__init__(server, f"{kind} {tool!r}: {message}")


class ArgumentsError(CallError, ValueError):
    """Raised when a call's arguments cannot be sent as JSON; nothing was sent.

    A lone surrogate (which UTF-8 cannot encode), NaN or infinity (which JSON has no
    words for) or a key that is not a string: the caller's mistake, never the server's.
    """

    def __init__(self, server: str, tool: str, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(
            server,
            tool,
            f"its arguments cannot be sent: {where} {problem}; nothing was sent, fix the "
            "arguments and call again",
        )


class CallDeniedError(CallError, PermissionError):
    """Raised when an approval gate or an interceptor refuses a call; the server never saw it.

    ``reason`` is the approver's or the interceptor's (or says why there was none to ask).
    """

    def __init__(self, server: str, tool: str, reason: str, *, kind: str = "tool") -> None:
        self.reason = reason or "no reason given"
        super().__init__(
            server,
            tool,
            f"the {_REQUEST[kind]} was denied and not sent to the server: {self.reason}",
            kind=kind,
        )


_REQUEST = {"tool": "call", "prompt": "request", "resource": "read", "completion": "request"}
"""What a denied request of each kind is called in its message."""


class SecretRefusedError(CallDeniedError):
    """Raised when a call's arguments carry a secret they may not carry; nothing was sent.

    ``where`` names the argument (``token``, ``items[2].url``, ``a key of headers``);
    ``carried`` says what it holds
    (``a secret of server 'gh'``, ``what looks like a GitHub token``), never the value;
    ``owner`` is the server whose secret it is (None for a credential format); ``rule`` is
    the rule that refused it.
    """

    def __init__(
        self,
        server: str,
        tool: str,
        *,
        where: str,
        carried: str,
        rule: str,
        remedy: str,
        owner: str | None = None,
        kind: str = "tool",
    ) -> None:
        self.where = where
        self.owner = owner
        self.rule = rule
        reason = f"its arguments carry {carried} (in {where}), and {rule}; {remedy}"
        super().__init__(server, tool, reason, kind=kind)


class ClientSessionsFullError(CallError):
    """Raised when a new client of a ``per_client`` server finds ``max_client_sessions``
    open; nothing was sent, and the clients that have a session go on."""

    def __init__(self, server: str, tool: str, cap: int, *, kind: str = "tool") -> None:
        self.cap = cap
        super().__init__(
            server,
            tool,
            f"refused: {cap} clients have a session of their own open, the server's "
            'max_client_sessions (sessions = "per_client"); try again once a client leaves '
            "or goes idle, or raise max_client_sessions in its table",
            kind=kind,
        )


class ToolRemovedError(CallError, LookupError):
    """Raised when a tool published from cached lists is not in its server's live list.

    Nothing was sent; the tool is gone from the registry too (list the tools again).
    """

    def __init__(self, server: str, tool: str) -> None:
        super().__init__(
            server,
            tool,
            "the server no longer lists it (its cached lists were out of date); "
            "list the tools again",
        )


class CallTimeoutError(CallError, TimeoutError):
    """Raised when a call gets no answer in time; the server may still have acted."""

    def __init__(self, server: str, tool: str, timeout: float, *, kind: str = "tool") -> None:
        self.timeout = timeout
        super().__init__(
            server,
            tool,
            f"no answer within {timeout:g} s; the call was cancelled, but the outcome is "
            f"unknown (the {kind} may have acted); raise the timeout or check the server",
            kind=kind,
        )


class NotSupportedError(CallError):
    """Raised when a server's capabilities do not offer what was asked; nothing was sent."""

    def __init__(self, server: str, tool: str, what: str, *, kind: str = "tool") -> None:
        self.what = what
        super().__init__(
            server, tool, f"the server does not support {what} (its capabilities say so)", kind=kind
        )


class ResultTooLargeError(CallError):
    """Raised when a tool ran but its result is larger than ``max_result_bytes``."""

    def __init__(
        self, server: str, tool: str, size: int, limit: int, *, kind: str = "tool"
    ) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            server,
            tool,
            f"the {kind} {'ran' if kind == 'tool' else 'answered'}, but its result is {size} "
            f"bytes, over the {limit}-byte limit (max_result_bytes); it was refused, not "
            "truncated",
            kind=kind,
        )


class ResultWithheldError(CallError):
    """Raised when a tool ran but its result was withheld: an interceptor failed on it (it
    might have carried what the interceptor was there to take out), or it held hidden
    characters under ``hidden_text = "refuse"`` (a prompt's or a resource's answer too)."""

    def __init__(self, server: str, tool: str, reason: str, *, kind: str = "tool") -> None:
        self.reason = reason
        done = "ran" if kind == "tool" else "answered"
        message = f"the {kind} {done}, but its result was withheld: {reason}"
        super().__init__(server, tool, message, kind=kind)


class ServerCrashedError(CallError):
    """Raised when the connection to a server is lost while a call is in flight."""

    def __init__(self, server: str, tool: str, reason: str, *, kind: str = "tool") -> None:
        super().__init__(
            server,
            tool,
            f"the connection was lost during the call ({reason}); the outcome is unknown",
            kind=kind,
        )


class UpstreamError(CallError):
    """Raised when the server answers a call with a JSON-RPC error instead of a result."""

    def __init__(
        self, server: str, tool: str, code: int, message: str, *, kind: str = "tool"
    ) -> None:
        self.code = code
        self.upstream_message = message
        super().__init__(
            server, tool, f"the server answered with error {code}: {message}", kind=kind
        )
