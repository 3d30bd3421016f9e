"""Running one program: spawn the sandbox, serve its calls, bound it, say how it ended.

The parent side of ``_child``. The program's stdout and stderr share one pipe that is
read as it comes and kept up to ``output_bytes``; its calls come on a pipe of their own
(so nothing it prints can pass for a call) and are answered on another, each through
the caller's `ToolCaller`: the program never reaches a server any other way. The run
ends when the sandbox exits; it is ended (the whole process group killed, then reaped)
at the wall-clock deadline, when the output runs far past its limit, when the program
breaks the protocol, and when the caller is cancelled. What stopped a run is told in
its result with the ``[registry.code_mode]`` key that would let it go further.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Any, cast

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types

from mcpmount.codemode._limits import CodeLimits, CodeRun, ToolCaller
from mcpmount.codemode._sandbox import ENV, code_sandbox_problem, sandbox_argv
from mcpmount.codemode._seccomp import exec_filter, sandbox_filter
from mcpmount.codemode._stubs import tools_module
from mcpmount.errors import RegistryError, SandboxUnavailableError
from mcpmount.sandbox import Tool, find_tool

__all__ = ["MAX_MESSAGE_BYTES", "run_code"]

MAX_MESSAGE_BYTES = 16 << 20
"""The largest call (its arguments as JSON) a program may send."""

_OUTPUT_SLACK = 1 << 20
"""Output read and dropped past the limit before the run is stopped: a program that
prints a little too much still finishes, one that floods does not."""

_REAP_BOUND = 5.0
"""Seconds to wait for a killed sandbox to be reaped (SIGKILL: it takes milliseconds)."""


async def run_code(
    source: str,
    tools: Sequence[mcp_types.Tool],
    call: ToolCaller,
    *,
    limits: CodeLimits = CodeLimits(),  # noqa: B008 (frozen: one shared default is fine)
) -> CodeRun:
    """Run the model's program in a fresh sandbox; its tool calls go through ``call``.

    Args:
        source: The program.
        tools: What ``import tools`` offers (public names).
        call: The caller's normal call path (visibility, guard, approval, policy).
        limits: What the run may take.

    Raises:
        SandboxUnavailableError: If no sandbox can be made here (the message says what
            to install). Code never runs unsandboxed.
    """
    problem = await anyio.to_thread.run_sync(code_sandbox_problem)
    tool = find_tool()
    if problem is not None or not isinstance(tool, Tool):
        raise SandboxUnavailableError(problem or "code mode needs bubblewrap")
    header = {
        "source": source,
        "tools": tools_module(tools),
        "limits": {
            "cpu_seconds": limits.cpu_seconds,
            "memory_bytes": limits.memory_bytes,
            "sigxfsz": int(signal.SIGXFSZ),
        },
        "exec_filter": exec_filter(),
    }
    return await _Run(limits, call).run(tool.path, _frame(header))


class _Run:
    """One run's state, from spawn to result."""

    def __init__(self, limits: CodeLimits, call: ToolCaller) -> None:
        self.limits = limits
        self.call = call
        self.calls = 0
        self.output = bytearray()
        self.dropped = 0
        self.started = 0.0
        self.startup: float | None = None
        self.stopped: str | None = None
        """Why the parent ended the run, if it did."""
        self.exception: str | None = None
        """The program's traceback (or exit status), as the child sent it."""
        self.memory = False
        self.failure: Exception | None = None
        """What the `ToolCaller` raised that is not a `RegistryError` (a bug on the way):
        the run is ended and it is raised from `run_code`, not told to the program."""
        self.process: anyio.abc.Process | None = None

    async def run(self, bwrap: str, header: bytes) -> CodeRun:
        seccomp_read, seccomp_write = os.pipe()
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        theirs = [seccomp_read, requests_write, answers_read]
        ours = [requests_read, answers_write]
        try:
            os.write(seccomp_write, sandbox_filter())  # a few hundred bytes: fits the pipe
            os.close(seccomp_write)
            for fd in ours:
                os.set_blocking(fd, False)
            argv = sandbox_argv(
                bwrap,
                memory_bytes=self.limits.memory_bytes,
                seccomp_fd=seccomp_read,
                fds=(requests_write, answers_read),
            )
            self.started = time.perf_counter()
            with anyio.CancelScope(shield=True):  # a spawn cancelled midway would orphan it
                self.process = await anyio.open_process(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=ENV,
                    start_new_session=True,  # one group to kill: bwrap, its init, the program
                    pass_fds=theirs,
                )
            for fd in theirs:
                os.close(fd)
            theirs = []
            await self._supervise(header, requests_read, answers_write)
        finally:
            with anyio.CancelScope(shield=True):
                await self._end()
            for fd in (*theirs, *ours):
                os.close(fd)
        if self.failure is not None:
            raise self.failure
        return CodeRun(self._result(), self.calls, self.startup or 0.0)

    async def _supervise(self, header: bytes, requests: int, answers: int) -> None:
        process = self.process
        assert process is not None  # spawned
        with anyio.move_on_after(self.limits.timeout) as deadline:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_write, answers, header)
                tg.start_soon(self._serve, requests, answers)
                drained = anyio.Event()
                tg.start_soon(self._read_output, process, drained)
                await process.wait()
                with anyio.move_on_after(1.0):  # what it printed last, if the pipe is still open
                    await drained.wait()
                tg.cancel_scope.cancel()
        if deadline.cancelled_caught and self.stopped is None:
            self.stopped = (
                f"it was stopped at its deadline of {self.limits.timeout:g} s; raise "
                "[registry.code_mode] timeout to let it run longer"
            )

    def _stop(self, why: str) -> None:
        """End the run now, saying why (the first reason wins)."""
        if self.stopped is None:
            self.stopped = why
        self._kill()

    def _kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    async def _end(self) -> None:
        """Kill the sandbox if it still runs, reap it and close its pipes (bounded)."""
        process = self.process
        if process is None:
            return
        self._kill()
        with anyio.move_on_after(_REAP_BOUND):
            await process.wait()
        await process.aclose()

    async def _read_output(self, process: anyio.abc.Process, drained: anyio.Event) -> None:
        assert process.stdout is not None
        limit = self.limits.output_bytes
        try:
            while True:
                chunk = await process.stdout.receive(65536)
                room = max(0, limit - len(self.output))
                self.output += chunk[:room]
                self.dropped += len(chunk) - min(room, len(chunk))
                if self.dropped > _OUTPUT_SLACK:
                    self._stop(
                        f"it printed far more than its {limit} bytes of output and was "
                        "stopped; print less, or raise [registry.code_mode] output_bytes"
                    )
                    return
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            drained.set()

    async def _serve(self, requests: int, answers: int) -> None:
        """Read the child's messages and answer its calls, until the pipe closes."""
        pending = bytearray()
        while True:
            await anyio.wait_readable(requests)
            try:
                data = os.read(requests, 65536)
            except BlockingIOError:
                continue
            if not data:
                return
            pending += data
            while (end := pending.find(b"\n")) >= 0:
                line = bytes(pending[:end])
                del pending[: end + 1]
                if not await self._handle(line, answers):
                    return
            if len(pending) > MAX_MESSAGE_BYTES:
                self._stop(f"it sent a call larger than {MAX_MESSAGE_BYTES >> 20} MiB")
                return

    async def _handle(self, line: bytes, answers: int) -> bool:
        """Act on one message; False when the run must end."""
        try:
            message: object = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._stop("it wrote something else than a call on the sandbox's call pipe")
            return False
        message = cast("dict[str, Any]", message)
        if message.get("ready") is True and self.startup is None:
            self.startup = time.perf_counter() - self.started
            return True
        if "exception" in message:
            self.exception = str(message["exception"])
            self.memory = message.get("memory") is True
            return True
        name, arguments = message.get("call"), message.get("arguments")
        if self.startup is None or not isinstance(name, str) or not isinstance(arguments, dict):
            self._stop("it wrote something else than a call on the sandbox's call pipe")
            return False
        answer = await self._answer(name, arguments)  # pyright: ignore[reportUnknownArgumentType]
        try:
            framed = _frame(answer)
        except ValueError:  # not JSON data after all: the program is told, not crashed
            framed = _frame({"error": f"{name}: its result cannot be passed to the program"})
        return await _write(answers, framed)

    async def _answer(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.calls >= self.limits.max_calls:
            return {
                "error": f"{name}: refused, this run has made its {self.limits.max_calls} "
                "calls; make fewer, or raise [registry.code_mode] max_calls"
            }
        self.calls += 1
        try:
            result = await self.call(name, arguments)
        except RegistryError as exc:  # refused or failed on the way: the program is told
            return {"error": str(exc)}
        except Exception as exc:  # a bug on the way: raised by run_code, not in a group
            self.failure = exc
            self._stop("the call path failed")
            return {"error": f"{name}: the call failed"}
        text = "\n".join(
            block.text for block in result.content if isinstance(block, mcp_types.TextContent)
        )
        if result.is_error:
            return {"error": text or f"{name} failed (it gave no message)"}
        if result.structured_content is not None:
            return {"value": result.structured_content}
        return {"value": text}

    def _result(self) -> mcp_types.CallToolResult:
        """The printed output, and the exception or why the run was stopped."""
        printed = self.output.decode(errors="replace")
        if self.dropped:
            printed += (
                f"\n[output cut: {self.dropped} more bytes were printed than the "
                f"{self.limits.output_bytes} kept; raise [registry.code_mode] output_bytes]\n"
            )
        why = self.stopped or self._exit_problem()
        if why is None:
            return _text(printed or "(no output)", error=False)
        return _text(
            f"{printed}{'' if printed.endswith(chr(10)) or not printed else chr(10)}{why}",
            error=True,
        )

    def _exit_problem(self) -> str | None:
        """What the exit says went wrong, or None for a clean end."""
        code = self.process.returncode if self.process is not None else None
        if self.startup is None:
            said = self.output.decode(errors="replace").strip().splitlines()
            raise SandboxUnavailableError(
                "the code sandbox could not start"
                + (f": {said[-1]}" if said else f" (exit status {code})")
            )
        memory_mb = self.limits.memory_bytes >> 20
        if self.exception is not None:
            if self.memory:
                return (
                    f"{self.exception}The program ran out of its {memory_mb} MB of memory; "
                    "raise [registry.code_mode] memory_mb to give it more"
                )
            return self.exception
        if code == 0:
            return None
        if code == 128 + signal.SIGXCPU or code == 128 + signal.SIGKILL:
            return (
                f"it was stopped after its {self.limits.cpu_seconds} s of CPU time; raise "
                "[registry.code_mode] cpu_seconds to let it compute longer"
            )
        if code == 128 + signal.SIGSYS:
            return "it was stopped by the sandbox: it made a system call that is not allowed"
        return f"it ended with exit status {code}"


def _frame(message: dict[str, Any]) -> bytes:
    """A message to the child: its length, then ``marshal`` (see ``_child``).

    Raises:
        ValueError: If it holds something ``marshal`` cannot write.
    """
    data = marshal.dumps(message)
    return len(data).to_bytes(8, "big") + data


def _text(text: str, *, error: bool) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=error
    )


async def _write(fd: int, data: bytes) -> bool:
    """Write all of ``data`` to a non-blocking pipe; False if the reader is gone."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)
        except BrokenPipeError:
            return False
    return True
