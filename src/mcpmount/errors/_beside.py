"""Errors beside the registry's tree: each raised by one room's own functions (a sandbox, the
semantic model, a login, serve's conversation header), and re-exported by that room.

They are not `RegistryError`s: a registry tells the first three in its own words (a server's
start error, a warning), and the last two reach the person or client who asked.
"""

from __future__ import annotations

__all__ = [
    "BadConversationError",
    "LoginFailed",
    "LoginRequired",
    "SandboxUnavailableError",
    "SemanticModelError",
]


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
