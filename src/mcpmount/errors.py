"""Every error mcpmount raises.

The tree::

    RegistryError                     base of everything below
    ├── ConfigError                   the config file is missing or invalid (CLI exit 2)
    ├── UnknownNameError              a lookup of a name that is not mounted
    │   ├── UnknownToolError          no mounted tool has that name
    │   └── UnknownPromptError        no mounted prompt has that name
    ├── UnknownResourceError          a URI no mounted server owns (``mcpmount://<ns>/...``)
    ├── MountError                    one or more required servers failed to mount
    └── ServerError                   a failure that belongs to one server (``.server``)
        ├── ServerStartError          spawn, connect, handshake or listing failed or timed out
        ├── ToolListError             the server's tool (prompt, resource) list was refused
        │   └── DefinitionChangedError  its definitions differ from the lock file's pins
        ├── NameCollisionError        a public name is already taken
        ├── ServerNotRunningError     the server crashed or was closed; nothing was sent
        └── CallError                 a call (a prompt, a read) failed (``.tool``, ``.kind``)
            ├── ArgumentsError        the arguments cannot be sent as JSON; nothing was sent
            ├── CallDeniedError       an approval gate or an interceptor refused it; not sent
            │   └── SecretRefusedError  its arguments carry a secret (``.owner``, ``.rule``)
            ├── CallTimeoutError      no answer in time: the outcome is unknown
            ├── ClientSessionsFullError  a new client past ``max_client_sessions``; not sent
            ├── NotSupportedError     the server does not offer what was asked; nothing was sent
            ├── ResultTooLargeError   the tool ran, but its result exceeds the limit
            ├── ResultWithheldError   it ran, but its result was withheld (interceptor, hidden text)
            ├── ServerCrashedError    the connection was lost while the call was in flight
            ├── ToolRemovedError      its server, once started, no longer lists it; not sent
            └── UpstreamError         the server answered with a JSON-RPC error (``.code``)

A tool that ran and reported ``isError`` is not an exception: it is a result the model must see.
Messages name the server (and the tool), say what to do, and never contain a secret value.

Beside the tree, raised by their rooms' own functions (which re-export them), and told by
a registry in its own words (a server's start error, a warning): `SandboxUnavailableError`
(`mcpmount.sandbox`), `SemanticModelError` (`mcpmount.semantic`, a `ValueError`) and
`LoginRequired` (`mcpmount.auth`: a url server that wants a person's login). Told to the
person or client who asked: `LoginFailed` (`mcpmount.auth`: ``mcpmount login``, or a
principal's login under ``serve``) and `BadConversationError` (`mcpmount.serve.sessions`,
a `ValueError`: a malformed ``Mcp-Conversation-Id`` header).
The few exception classes defined elsewhere are listed in ``tests/test_tree.py``, each
with the reason it stays: most are private signals caught inside their room.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pydantic

__all__ = [
    "ArgumentsError",
    "BadConversationError",
    "CallDeniedError",
    "CallError",
    "CallTimeoutError",
    "ClientSessionsFullError",
    "ConfigError",
    "DefinitionChangedError",
    "LoginFailed",
    "LoginRequired",
    "MountError",
    "NameCollisionError",
    "NotSupportedError",
    "RegistryError",
    "ResultTooLargeError",
    "ResultWithheldError",
    "SandboxUnavailableError",
    "SecretRefusedError",
    "SemanticModelError",
    "ServerCrashedError",
    "ServerError",
    "ServerNotRunningError",
    "ServerStartError",
    "ToolListError",
    "ToolRemovedError",
    "UnknownNameError",
    "UnknownPromptError",
    "UnknownResourceError",
    "UnknownToolError",
    "UpstreamError",
    "describe_invalid",
]


class RegistryError(Exception):
    """Base class of every error mcpmount raises on purpose."""


class ConfigError(RegistryError):
    """Raised when a config file is missing, unreadable or invalid.

    ``problems`` holds one line per problem, each naming the server and key where known.
    """

    def __init__(self, path: str, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{path}: {len(self.problems)} config {noun}:\n{lines}")


class UnknownNameError(RegistryError, LookupError):
    """Base class of a lookup of a name that is not mounted; ``kind`` says what was sought."""

    kind = "name"

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        # A model reads this (served, or through an adapter): it speaks of tools, not of
        # library calls.
        hint = (
            f"; did you mean {', '.join(self.suggestions)}?"
            if self.suggestions
            else f"; list the {self.kind}s for their exact names{self.also}"
        )
        super().__init__(f"no mounted {self.kind} is named {name!r}{hint}")

    also = ""
    """What else finds a name of this kind, said after the hint to list them."""


class UnknownToolError(UnknownNameError):
    """Raised when a call names a tool that is not mounted."""

    kind = "tool"
    also = ", or find one by what it does with the tool_search tool where it is listed"


class UnknownPromptError(UnknownNameError):
    """Raised when a prompt name is not mounted."""

    kind = "prompt"


class UnknownResourceError(RegistryError, LookupError):
    """Raised when a URI is not a registry URI, or names a server that is not mounted.

    Registry URIs are ``mcpmount://<namespace>/<the server's own URI>``.
    """

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(
            f"cannot route resource {uri!r}: {reason}; list the resources for their exact URIs"
        )


class ServerError(RegistryError):
    """Base class of failures that belong to one server; ``server`` is its namespace."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        self.detail = message
        super().__init__(f"server {server!r}: {message}")


class ServerStartError(ServerError):
    """Raised when a server cannot be spawned, connected, handshaken or listed in time."""


class ToolListError(ServerError):
    """Raised when a server's tool list breaks a rule or a limit; nothing of it is registered.

    Also raised for its prompt, resource and resource-template lists: ``kind`` says which
    (``"tool"``, ``"prompt"``, ``"resource"``, ``"resource template"``).
    """

    def __init__(
        self, server: str, message: str, *, tool: str | None = None, kind: str = "tool"
    ) -> None:
        self.tool = tool
        self.kind = kind
        where = f"{kind} {tool!r}: " if tool is not None else ""
        super().__init__(server, f"{where}{message}")


class DefinitionChangedError(ToolListError):
    """Raised when a server's tools differ from its pinned definitions and its policy refuses.

    ``summary`` says what was added, removed and changed; ``details`` holds the diff.
    """

    def __init__(
        self, server: str, summary: str, details: str = "", *, what: str = "tools"
    ) -> None:
        self.summary = summary
        self.details = details
        message = (
            f"its {what} differ from the lock file: {summary}; review the change, then run "
            "`mcpmount lock` to accept it (or set on_change)"
        )
        super().__init__(server, message + (f"\n{details}" if details else ""))


class NameCollisionError(ServerError):
    """Raised when a public name is already taken by another tool."""

    def __init__(
        self,
        server: str,
        tool: str,
        name: str,
        other_server: str,
        other_tool: str,
        *,
        kind: str = "tool",
    ) -> None:
        self.tool = tool
        self.name = name
        self.other_server = other_server
        self.other_tool = other_tool
        self.kind = kind
        super().__init__(
            server,
            f"{kind} {tool!r} maps to {name!r}, which server {other_server!r} already uses "
            f"for its {kind} {other_tool!r}; rename one namespace in the config, or give "
            "a server with prefix = false its prefix back",
        )


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
    """Raised when a tool published from a cached manifest is not in its server's live list.

    Nothing was sent; the tool is gone from the registry too (list the tools again).
    """

    def __init__(self, server: str, tool: str) -> None:
        super().__init__(
            server,
            tool,
            "the server no longer lists it (its cached manifest was out of date); "
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


class MountError(RegistryError):
    """Raised when required servers fail to mount; every server started was closed first.

    ``failures`` maps each failed server's namespace to its error.
    """

    def __init__(self, failures: Mapping[str, ServerError]) -> None:
        self.failures = dict(failures)
        lines = "\n".join(f"  - {err}" for err in self.failures.values())
        noun = "server" if len(self.failures) == 1 else "servers"
        super().__init__(f"{len(self.failures)} required {noun} failed to mount:\n{lines}")


class SandboxUnavailableError(Exception):
    """Raised when a server must run in a sandbox that cannot be made here."""

    def __init__(self, message: str, *, hidden: str | None = None) -> None:
        super().__init__(message)
        self.hidden = hidden
        """The path the sandbox would have had to show, where that is why."""


class SemanticModelError(ValueError):
    """The semantic model cannot be used: missing, altered, not ONNX, or the wrong shape."""


class LoginRequired(Exception):
    """The server wants a login that only a person can give: run ``mcpmount login NS``."""


class LoginFailed(Exception):
    """A login did not succeed; the message says why and names the server."""


class BadConversationError(ValueError):
    """Raised when a request's conversation header (``header``) is not a valid id.

    The value is not told, only its length: a client may have put anything there.
    """

    def __init__(self, header: str, value: str) -> None:
        self.length = len(value)
        super().__init__(
            f"the {header} header must be 1-128 of A-Z a-z 0-9 . _ : - "
            f"(got {self.length} characters that are not); nothing was done"
        )


def describe_invalid(exc: ValueError) -> str:
    """Say what is wrong with untrusted data that failed to parse, without quoting it.

    The input may hold a secret (a server can echo its environment), so only the location
    and the rule broken are told, never the value.
    """
    if not isinstance(exc, pydantic.ValidationError):
        return type(exc).__name__
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = exc.error_count() - 1
    problem = f"{where}: {first['msg']}" if where else first["msg"]
    return problem + (f" (and {more} more problems)" if more else "")
