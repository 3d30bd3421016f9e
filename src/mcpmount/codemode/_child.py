"""The program inside the sandbox: it limits itself, then runs the model's code.

Run as ``python -I -S -c <this file's text> REQUESTS ANSWERS`` (two pipe fds), so it
imports only the standard library and nothing of mcpmount. In order:

1. reads the run's header from ANSWERS: the program, the ``tools`` module's source, the
   limits and the exec filter;
2. sets ``RLIMIT_CPU``, ``RLIMIT_AS``, ``RLIMIT_FSIZE`` (soft and hard: without
   capabilities it cannot raise them again) and ``RLIMIT_CORE`` to 0, makes itself
   undumpable and loads the exec filter (``_seccomp``), before any of the model's code;
3. installs ``_mcpmount_code`` (`call`, `ToolError`) and ``tools`` in ``sys.modules``,
   says it is ready, and runs the program as ``__main__`` from ``<program>``.

Start-up is what a run waits for, so it imports only what the interpreter has already
loaded or what is cheap (``marshal``, ``_json``, ``_thread``, ``resource``, ``ctypes``):
``json``, ``traceback`` and ``signal`` would pull in ``re`` and ``enum``, a third of
the start-up. So the parent sends with ``marshal`` (length-prefixed; only the parent
writes it, so the child may trust it), and the child answers in JSON lines made by
`encode` (the parent never unmarshals what a program could forge). ``traceback`` is
imported when an exception is to be told.

Each call is one request and one answer, one at a time (a lock: a program's threads may
call). An exception ends the run with its traceback, cut down to the frames of
``<program>`` and ``<tools>``; the model never sees this file's frames. Printed output
goes to stdout and stderr, which the parent reads and bounds.
"""

from __future__ import annotations

import _thread
import io
import marshal
import os
import resource
import sys
import types
from _json import encode_basestring_ascii

__all__ = ["PROGRAM", "TOOLS", "ToolError", "encode", "main"]

PROGRAM = "<program>"
"""The file name of the model's code in tracebacks."""
TOOLS = "<tools>"
"""The file name of the generated ``tools`` module in tracebacks."""

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_SET_DUMPABLE = 4
_SECCOMP_MODE_FILTER = 2
_MAX_DEPTH = 200


class ToolError(Exception):
    """A tool's error result, or a call that was refused: its text is the message."""


def encode(value: object, depth: int = 0) -> str:
    """``value`` as JSON text, as ``json.dumps(value, allow_nan=False)`` would write it."""
    if depth > _MAX_DEPTH:
        raise ValueError("the value is nested too deeply to send")
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("Out of range float values are not JSON compliant")
        return float.__repr__(value)
    if isinstance(value, (list, tuple)):
        items: list[object] | tuple[object, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return "[" + ",".join(encode(item, depth + 1) for item in items) + "]"
    if isinstance(value, dict):
        pairs: dict[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        return "{" + ",".join(_key(k) + ":" + encode(v, depth + 1) for k, v in pairs.items()) + "}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: object) -> str:
    """A dict key as JSON writes it: a string (numbers, booleans and null as their text)."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if key is None or isinstance(key, (int, float)):
        return encode_basestring_ascii(encode(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


class _Channel:
    """The two pipes to the parent, one call at a time."""

    def __init__(self, requests: int, answers: int) -> None:
        self._requests = requests
        self._answers = open(answers, "rb")  # noqa: SIM115 (open for the whole run)
        self._lock = _thread.allocate_lock()

    def receive(self) -> dict[str, object] | None:
        """The parent's next message, or None if it closed the pipe."""
        size = self._answers.read(8)
        if len(size) < 8:
            return None
        return marshal.loads(self._answers.read(int.from_bytes(size, "big")))

    def send(self, message: str) -> None:
        view = memoryview((message + "\n").encode())
        while view:
            view = view[os.write(self._requests, view) :]

    def call(self, name: str, arguments: dict[str, object]) -> object:
        """Call the tool ``name`` through the parent (``_mcpmount_code.call``)."""
        if not isinstance(name, str) or not isinstance(arguments, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("call(name: str, arguments: dict)")
        message = encode({"call": name, "arguments": arguments})  # not JSON: raises, nothing sent
        with self._lock:
            self.send(message)
            answer = self.receive()
        if answer is None:
            raise ToolError(f"{name}: no answer, the run is ending")
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
    libc = ctypes.CDLL(None, use_errno=True)
    # A file past RLIMIT_FSIZE is then OSError, not death. Through libc: the signal module
    # would import enum (see the module); the number comes from the parent's.
    libc.signal(limits["sigxfsz"], ctypes.c_void_p(1))  # SIG_IGN

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


def _run(module: types.ModuleType, source: str) -> None:
    """Run ``source`` as ``module`` (in ``sys.modules`` by its name)."""
    sys.modules[module.__name__] = module
    exec(compile(source, str(module.__file__), "exec"), module.__dict__)


def _new_module(name: str, filename: str, **names: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(names, __file__=filename)
    return module


def _model_traceback(exc: BaseException, sources: dict[str, str]) -> str:
    """The traceback of ``exc`` with only the frames of the program and ``tools``."""
    import linecache
    import traceback

    for filename, source in sources.items():
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    shown = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    todo = [shown]
    while todo:
        each = todo.pop()
        if id(each) in seen:
            continue
        seen.add(id(each))
        kept = [frame for frame in each.stack if frame.filename in sources]
        each.stack = traceback.StackSummary.from_list(kept)
        todo += [e for e in (each.__cause__, each.__context__) if e is not None]
    return "".join(shown.format())


def main() -> None:
    """Run one program (see the module)."""
    channel = _Channel(int(sys.argv[1]), int(sys.argv[2]))
    header = channel.receive()
    if header is None:
        return
    _limit(header["limits"], header["exec_filter"])  # pyright: ignore[reportArgumentType]
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # what a pipe gives: lines reach it as printed
            stream.reconfigure(line_buffering=True)
    ToolError.__module__ = "tools"
    sys.modules["_mcpmount_code"] = _new_module(
        "_mcpmount_code", "<_mcpmount_code>", call=channel.call, ToolError=ToolError
    )
    sources: dict[str, str] = {TOOLS: header["tools"], PROGRAM: header["source"]}  # pyright: ignore[reportAssignmentType]
    del header
    _run(_new_module("tools", TOOLS), sources[TOOLS])
    main_module = _new_module("__main__", PROGRAM, __builtins__=__builtins__)
    channel.send('{"ready":true}')
    try:
        _run(main_module, sources[PROGRAM])
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _stop(channel, f"the program exited with status {exc.code!r}")
    except BaseException as exc:  # whatever the model's code raised
        memory = isinstance(exc, MemoryError)
        if memory:
            main_module.__dict__.clear()  # free what it holds, to format the traceback
        try:
            text = _model_traceback(exc, sources)
        except MemoryError:
            text = f"{type(exc).__name__} (its traceback did not fit in memory)\n"
        _stop(channel, text, memory=memory)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()


def _stop(channel: _Channel, text: str, *, memory: bool = False) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send(encode({"exception": text, "memory": memory}))
    sys.exit(1)


if __name__ == "__main__":
    main()
