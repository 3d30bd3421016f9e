"""The failures that belong to one server while it mounts: starting it, its lists, its names;
and `MountError`, which gathers the required servers' failures.

Each names the server (``.server``, its namespace) and says what to do about it.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcpmount.errors._registry import RegistryError

__all__ = [
    "DefinitionChangedError",
    "MountError",
    "NameCollisionError",
    "ServerError",
    "ServerStartError",
    "ToolListError",
]


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


class MountError(RegistryError):
    """Raised when required servers fail to mount; every server started was closed first.

    ``failures`` maps each failed server's namespace to its error.
    """

    def __init__(self, failures: Mapping[str, ServerError]) -> None:
        self.failures = dict(failures)
        lines = "\n".join(f"  - {err}" for err in self.failures.values())
        noun = "server" if len(self.failures) == 1 else "servers"
        super().__init__(f"{len(self.failures)} required {noun} failed to mount:\n{lines}")
