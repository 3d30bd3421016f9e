"""The command line's exit codes, and how a failure is told: as text, or under ``--json`` as
one JSON object.

Like the parser, this imports only the standard library: a usage error is told before the
SDK, pydantic or rich is loaded.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Final, TextIO

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Failure",
    "UsageError",
]

EXIT_OK: Final = 0
"""Every server mounted, every call answered."""
EXIT_FAILED: Final = 1
"""A server or a call failed."""
EXIT_USAGE: Final = 2
"""Bad config or usage: nothing was started."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C (128 + SIGINT), as a shell reports it."""


@dataclass(frozen=True)
class Failure:
    """Why a command failed, as ``--json`` tells it: ``{"code", "message", "server", "hint"}``.

    A script tells failures apart by ``code`` (a stable word: ``usage``, ``config``,
    ``mount``, ``unknown_tool``, ``call_timeout``...), not by parsing ``message``, which is
    written for people and may change.
    """

    code: str
    """What kind of failure: ``usage``, ``config``, or the error's kind (`mcpmount.errors`)."""
    message: str
    """The whole error, as the command prints it without ``--json``."""
    server: str | None = None
    """The server it belongs to, where there is one."""
    hint: str | None = None
    """What to do about it, where something can be said."""
    exit_code: int = EXIT_FAILED
    """The process's exit code (not in the JSON: it is the exit code)."""

    def as_json(self) -> str:
        """The failure as one line of JSON (ASCII only: no control code reaches a terminal)."""
        fields = {"code": self.code, "message": self.message}
        return json.dumps({**fields, "server": self.server, "hint": self.hint})

    def tell(self, *, as_json: bool, stream: TextIO | None = None) -> int:
        """Write the failure (as JSON: on stdout, or ``stream``) and return the exit code.

        Without ``as_json`` the message goes to stderr, as every diagnostic does; a caller
        with a rich console prints it there itself (`mcpmount.cli._shown.shown`).
        """
        if as_json:
            (stream or sys.stdout).write(self.as_json() + "\n")
        else:
            (stream or sys.stderr).write(self.message + "\n")
        return self.exit_code


class UsageError(Exception):
    """Raised by a command whose arguments cannot be used (exit 2); nothing was started."""

    def __init__(self, message: str, hint: str | None = None, *, usage: str = "") -> None:
        self.message = message
        self.hint = hint
        self.usage = usage
        """The command's usage line, printed above the message without ``--json``."""
        super().__init__(message)

    def failure(self) -> Failure:
        return Failure("usage", self.message, hint=self.hint, exit_code=EXIT_USAGE)
