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
Messages name the server (and the tool), say what to do, and never contain a secret value:
untrusted data that failed to parse is told by `describe_invalid`, which never quotes it.

Beside the tree, raised by their rooms' own functions (which re-export them), and told by
a registry in its own words (a server's start error, a warning): `SandboxUnavailableError`
(`mcpmount.sandbox`), `SemanticModelError` (`mcpmount.semantic`, a `ValueError`) and
`LoginRequired` (`mcpmount.auth`: a url server that wants a person's login). Told to the
person or client who asked: `LoginFailed` (`mcpmount.auth`: ``mcpmount login``, or a
principal's login under ``serve``) and `BadConversationError` (`mcpmount.serve.sessions`,
a `ValueError`: a malformed ``Mcp-Conversation-Id`` header).
The few exception classes defined elsewhere are listed in ``tests/test_tree.py``, each
with the reason it stays: most are private signals caught inside their room.

Its modules, by concept: ``_registry`` (the base, the config, lookups of unmounted names),
``_servers`` (one server's failures while it mounts, and `MountError`), ``_calls`` (one
call's failures), ``_beside`` (the errors beside the tree) and ``_invalid``
(`describe_invalid`). Each error is named by its public home, ``mcpmount.errors.<Name>``
(its ``__module__``), in tracebacks, logs and pickles: where its code lives may change.
This room imports nothing of mcpmount, so every other room may raise its errors.
"""

from mcpmount.errors._beside import (
    BadConversationError,
    LoginFailed,
    LoginRequired,
    SandboxUnavailableError,
    SemanticModelError,
)
from mcpmount.errors._calls import (
    ArgumentsError,
    CallDeniedError,
    CallError,
    CallTimeoutError,
    ClientSessionsFullError,
    NotSupportedError,
    ResultTooLargeError,
    ResultWithheldError,
    SecretRefusedError,
    ServerCrashedError,
    ServerNotRunningError,
    ToolRemovedError,
    UpstreamError,
)
from mcpmount.errors._invalid import describe_invalid
from mcpmount.errors._registry import (
    ConfigError,
    RegistryError,
    UnknownNameError,
    UnknownPromptError,
    UnknownResourceError,
    UnknownToolError,
)
from mcpmount.errors._servers import (
    DefinitionChangedError,
    MountError,
    NameCollisionError,
    ServerError,
    ServerStartError,
    ToolListError,
)

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


def _name_by_home() -> None:
    """Give each public name this package as its ``__module__``: tracebacks, logs and pickles
    then name ``mcpmount.errors.CallError``, the home that stays, and not the private module
    that holds its code, which may move."""
    for name in __all__:
        globals()[name].__module__ = __name__


_name_by_home()
