"""What a command's error is, as the command line tells it: a `Failure` with a code a script
can test, the server it belongs to and a hint of what to do.

The code is the error's kind (`mcpmount.errors`) as a word: ``ConfigError`` is ``config``,
``UnknownToolError`` ``unknown_tool``, ``CallTimeoutError`` ``call_timeout``; an
``OSError`` (a file that cannot be written, an address in use) is ``os``.
"""

from __future__ import annotations

import re
from typing import Final

from mcpmount.cli._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Failure, UsageError
from mcpmount.errors import (
    ArgumentsError,
    CallTimeoutError,
    ConfigError,
    MountError,
    ServerError,
    ServerStartError,
    UnknownNameError,
    UnknownResourceError,
)

__all__ = ["failure_of"]

_WORD_START: Final = re.compile(r"(?<!^)(?=[A-Z])")
_SERVER_KEY: Final = re.compile(r"^(?:refused: )?servers\.([^.\s:]+)")
"""The server a config problem names first (``servers.fs.command: ...``)."""


def _code(exc: BaseException) -> str:
    name = type(exc).__name__.removesuffix("Error")
    return _WORD_START.sub("_", name).lower()


def _server(exc: BaseException) -> str | None:
    if isinstance(exc, ServerError):
        return exc.server
    if isinstance(exc, MountError) and len(exc.failures) == 1:
        return next(iter(exc.failures))
    if isinstance(exc, ConfigError):
        named = {found[1] for problem in exc.problems if (found := _SERVER_KEY.match(problem))}
        return named.pop() if len(named) == 1 else None
    return None


def _hint(exc: BaseException, command: str) -> str | None:
    match exc:
        case UnknownNameError(suggestions=suggestions) if suggestions:
            return f"did you mean {', '.join(suggestions)}?"
        case UnknownNameError(kind=kind):
            return f"`mcpmount {kind}s CONFIG` lists the mounted {kind}s"
        case UnknownResourceError():
            return "`mcpmount resources CONFIG` lists the mounted resources"
        case ConfigError():
            return "fix the file: each problem names its key; `mcpmount check CONFIG` checks it"
        case MountError() | ServerStartError():
            return "`mcpmount check CONFIG -v` starts each server and shows how it did"
        case ArgumentsError(tool=tool):
            return f"`mcpmount describe {tool}` shows the tool's arguments"
        case CallTimeoutError():
            return f"give it more time: `mcpmount {command} ... --timeout SECONDS`"
        case _:
            return None


def failure_of(exc: BaseException, command: str) -> Failure:
    """The failure ``exc`` is, as ``command`` tells it (exit 2 for usage and config, 130 for
    Ctrl-C, else 1)."""
    if isinstance(exc, UsageError):
        return exc.failure()
    if isinstance(exc, KeyboardInterrupt):
        return Failure("interrupted", f"{command}: interrupted", exit_code=EXIT_INTERRUPTED)
    if isinstance(exc, OSError):
        return Failure("os", f"{command}: {exc}")
    usage = isinstance(exc, ConfigError | ArgumentsError)
    return Failure(
        _code(exc),
        str(exc),
        server=_server(exc),
        hint=_hint(exc, command),
        exit_code=EXIT_USAGE if usage else EXIT_FAILED,
    )
