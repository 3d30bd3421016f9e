"""``before_call``: a program that allows or refuses each call to its server.

The program gets each request as one JSON object on its stdin::

    {"kind": "tools/call", "server": "gh", "tool": "gh__create_issue",
     "raw_name": "create_issue", "arguments": {...}}

``kind`` is also ``prompts/get`` (``tool`` the prompt's public name, ``arguments`` its
arguments), ``resources/read`` (``tool`` the registry URI, ``arguments`` ``{"uri": ...}``
with the server's own URI) or ``completion/complete`` (``arguments`` ``{"ref", "argument",
"context"}``): a program that refuses everything refuses those too.

Exit status 0 lets the call through; any other status refuses it, and the caller (the
model) is told the first line the program printed (stdout, else stderr), with every known
secret redacted. It runs as `run_program` runs a helper: the user's environment, a
process group of its own, at most ``before_call_timeout`` seconds, stopped and swept
however it ends; a program that cannot start, or runs out of time, refuses the call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import CallDeniedError
from mcpmount.gates._secrets import ERROR_KINDS
from mcpmount.handlers import Interceptor, ToolCall
from mcpmount.processes import Reaper, first_line, run_program
from mcpmount.tool import MountedTool

__all__ = ["ProgramGate"]

_MAX_OUTPUT = 4096
"""The most of the program's stdout kept: its first line is the reason shown."""


class ProgramGate:
    """The hooks that run each server's ``before_call`` program.

    Args:
        reaper: Watches each run, so that a hung program does not outlive a killed host.
        redact: Hides every known secret in what the program printed.
    """

    def __init__(self, reaper: Reaper, redact: Callable[[str], str]) -> None:
        self._reaper = reaper
        self._redact = redact

    def hook(
        self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings
    ) -> Interceptor | None:
        """The hook of ``entry``'s calls, if its server has a ``before_call`` program."""
        return self.of(spec)

    def of(self, spec: ServerSpec) -> Interceptor | None:
        """The hook of every request to ``spec``'s server (of every kind), if it has a
        ``before_call`` program."""
        argv = spec.before_call
        if argv is None:
            return None
        seconds = spec.before_call_timeout
        program = os.path.basename(argv[0]) or argv[0]

        async def ask(call: ToolCall) -> None:
            def refused(why: str) -> CallDeniedError:
                reason = f"before_call ({program}) {why}"
                kind = ERROR_KINDS[call.kind]
                return CallDeniedError(call.server, self._redact(call.tool), reason, kind=kind)

            payload = {
                "kind": call.kind,
                "server": call.server,
                "tool": call.tool,
                "raw_name": call.raw_name,
                "arguments": dict(call.arguments),
            }
            stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
            try:
                run = await run_program(
                    argv, timeout=seconds, max_output=_MAX_OUTPUT, stdin=stdin, reaper=self._reaper
                )
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                why = f"cannot be started: {reason}; check the program's name or path"
                raise refused(why) from None
            if run.status is None:
                raise refused(
                    f"did not answer within {seconds:g} s, so the call was not allowed; "
                    "raise before_call_timeout or make it answer sooner"
                )
            if run.status != 0:
                said = first_line(run.stdout, self._redact) or first_line(run.stderr, self._redact)
                raise refused(f"refused it: {said}" if said else f"{run.how()}, refusing it")

        return Interceptor(before=ask, name=f"before_call ({program})")
