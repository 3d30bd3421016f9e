"""The program inside the sandbox: it limits itself, then runs the model's code.

Run as ``python -I -S -c <this file's text> REQUESTS ANSWERS`` (two pipe fds), so it
imports only the standard library and nothing of mcpmount, and starts fast. In order:

1. reads the run's header (one JSON line on ANSWERS): the program, the ``tools`` module's
   source, the limits and the exec filter;
2. sets ``RLIMIT_CPU``, ``RLIMIT_AS``, ``RLIMIT_FSIZE`` (soft and hard: without
   capabilities it cannot raise them again) and ``RLIMIT_CORE`` to 0, makes itself
   undumpable and loads the exec filter (``_seccomp``), before any of the model's code;
3. installs ``_mcpmount_code`` (`call`, `ToolError`) and ``tools`` in ``sys.modules``,
   says it is ready, and runs the program as ``__main__`` from ``<program>``.

Each call is one JSON line on REQUESTS and one answer on ANSWERS, one at a time (a lock:
a program's threads may call). An exception ends the run with its traceback, cut down to
the frames of ``<program>`` and ``<tools>``; the model never sees this file's frames.
Printed output goes to stdout and stderr, which the parent reads and bounds.
"""

from __future__ import annotations

import io
import json
import linecache
import os
import resource
import signal
import sys
import threading
import traceback
import types
from collections.abc import Mapping

__all__ = ["PROGRAM", "TOOLS", "ToolError", "main"]

PROGRAM = "<program>"
"""The file name of the model's code in tracebacks."""
TOOLS = "<tools>"
"""The file name of the generated ``tools`` module in tracebacks."""

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_SET_DUMPABLE = 4
_SECCOMP_MODE_FILTER = 2


class ToolError(Exception):
    """A tool's error result, or a call that was refused: its text is the message."""


class _Channel:
    """The two pipes to the parent, one call at a time."""

    def __init__(self, requests: int, answers: int) -> None:
        self._requests = requests
        self._answers = os.fdopen(answers, "rb")
        self._lock = threading.Lock()

    def header(self) -> dict[str, object]:
        return json.loads(self._answers.readline())

    def send(self, message: Mapping[str, object]) -> None:
        data = (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._requests, view) :]

    def call(self, name: str, arguments: dict[str, object]) -> object:
        if not isinstance(name, str) or not isinstance(arguments, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("call(name: str, arguments: dict)")
        message = {"call": name, "arguments": arguments}
        json.dumps(message, allow_nan=False)  # not JSON: TypeError/ValueError, nothing sent
        with self._lock:
            self.send(message)
            line = self._answers.readline()
        if not line:
            raise ToolError(f"{name}: no answer, the run is ending")
        answer = json.loads(line)
        if "error" in answer:
            raise ToolError(answer["error"])
        return answer.get("value")


def _limit(limits: dict[str, int], exec_filter: bytes) -> None:
    """Set the limits and load the exec filter, or fail (never run the code unlimited)."""
    import ctypes

    for name, value in (
        ("RLIMIT_CPU", limits["cpu_seconds"]),
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_FSIZE", limits["memory_bytes"]),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file too large is OSError, not death
    libc = ctypes.CDLL(None, use_errno=True)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    program = SockFprog(len(exec_filter) // 8, exec_filter)
    for option, *args in (
        (_PR_SET_DUMPABLE, 0, 0, 0, 0),
        (_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(program), 0, 0),
    ):
        if libc.prctl(option, *(ctypes.c_ulong(a) for a in args)) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _run(module: types.ModuleType, filename: str, source: str) -> None:
    """Run ``source`` as ``module`` (in ``sys.modules``), its lines kept for tracebacks."""
    module.__file__ = filename
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    sys.modules[module.__name__] = module
    exec(compile(source, filename, "exec"), module.__dict__)


def _model_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` with only the frames of the program and ``tools``."""
    shown = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    todo = [shown]
    while todo:
        each = todo.pop()
        if id(each) in seen:
            continue
        seen.add(id(each))
        kept = [frame for frame in each.stack if frame.filename in (PROGRAM, TOOLS)]
        each.stack = traceback.StackSummary.from_list(kept)
        todo += [e for e in (each.__cause__, each.__context__) if e is not None]
    return "".join(shown.format())


def main() -> None:
    """Run one program (see the module)."""
    channel = _Channel(int(sys.argv[1]), int(sys.argv[2]))
    header = channel.header()
    _limit(header["limits"], bytes.fromhex(header["exec_filter"]))  # pyright: ignore[reportArgumentType]
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # what a pipe gives: lines reach it as printed
            stream.reconfigure(line_buffering=True)
    ToolError.__module__ = "tools"
    code_module = types.ModuleType("_mcpmount_code")
    code_module.__dict__.update(call=channel.call, ToolError=ToolError)
    sys.modules["_mcpmount_code"] = code_module
    _run(types.ModuleType("tools"), TOOLS, header["tools"])  # pyright: ignore[reportArgumentType]
    main_module = types.ModuleType("__main__")
    channel.send({"ready": True})
    source: str = header["source"]  # pyright: ignore[reportAssignmentType]
    del header
    try:
        _run(main_module, PROGRAM, source)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _stop(channel, f"the program exited with status {exc.code!r}")
    except BaseException as exc:
        memory = isinstance(exc, MemoryError)
        if memory:
            main_module.__dict__.clear()  # free what it holds, to format the traceback
        try:
            text = _model_traceback(exc)
        except MemoryError:
            text = f"{type(exc).__name__} (its traceback did not fit in memory)\n"
        _stop(channel, text, memory=memory)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()


def _stop(channel: _Channel, text: str, *, memory: bool = False) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send({"exception": text, "memory": memory})
    sys.exit(1)


if __name__ == "__main__":
    main()
