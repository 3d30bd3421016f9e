"""A short-lived helper program (``headers_command``, ``before_call``), run bounded and reaped.

`run_program` starts the program with the user's environment as the leader of a process
group of its own, writes its input and closes its stdin, and keeps the start of what it
prints, for at most ``timeout`` seconds. However it ends (exit, timeout, the caller's
cancellation) the group is stopped and swept as a stdio server's is (`ProcessGroup.stop`:
on Linux under the subreaper launcher, so that a daemon it leaves behind, ``setsid`` and
a double fork, is ended too), and a `Reaper` given watches it meanwhile, so that one that
hangs does not outlive even a killed host. What it printed may hold secrets: callers
quote at most `first_line` of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from mcpmount.processes._procgroup import ProcessGroup
from mcpmount.processes._reaper import Reaper

__all__ = ["LINE", "ProgramRun", "first_line", "run_program"]

LINE = 200
"""The most of a program's output a message quotes: the start of its first line."""


@dataclass(frozen=True, slots=True)
class ProgramRun:
    """How a helper program ended, and the start of what it printed."""

    status: int | None
    """Its exit status (negative: killed by that signal); None if it ran out of time."""
    stdout: bytes
    """At most ``max_output + 1`` bytes, so that too much output can be told."""
    stderr: bytes
    """Its first few lines at most."""

    def how(self) -> str:
        """Say how a program that failed ended, e.g. ``exited with status 3``."""
        status = self.status or 0
        return f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"


async def run_program(
    argv: Sequence[str],
    *,
    timeout: float,
    max_output: int,
    stdin: bytes = b"",
    reaper: Reaper | None = None,
) -> ProgramRun:
    """Run ``argv`` with ``stdin`` as its input; see the module docstring.

    Raises:
        OSError: It cannot be started (e.g. ``FileNotFoundError``).
    """
    label = f"program {os.path.basename(argv[0]) or argv[0]!r}"
    group = await ProcessGroup.spawn(
        argv, env=os.environ, cwd=None, on_reaped=lambda _: None, label=label
    )
    if reaper is not None:
        reaper.watch(group.pid, group.term_grace)
    stdout, stderr = bytearray(), bytearray()
    process = group.process
    try:
        with anyio.move_on_after(timeout) as bounded:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_write, process.stdin, stdin)
                tg.start_soon(_read, process.stdout, stdout, max_output + 1)
                tg.start_soon(_read, process.stderr, stderr, LINE * 4)
            await group.wait_exit()
    finally:  # reaps the leader, so ``returncode`` is set after it
        with anyio.CancelScope(shield=True):
            await group.stop()
            await group.close_pipes()
            if reaper is not None:
                reaper.unwatch(group.pid)
    status = None if bounded.cancelled_caught else (group.returncode or 0)
    return ProgramRun(status, bytes(stdout), bytes(stderr))


async def _write(stream: ByteSendStream | None, data: bytes) -> None:
    """Write ``data`` and close ``stream``; a program that exits without reading is fine."""
    if stream is None:
        return
    try:
        if data:
            await stream.send(data)
        await stream.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass


async def _read(stream: ByteReceiveStream | None, into: bytearray, cap: int) -> None:
    """Read ``stream`` to its end, keeping its first ``cap`` bytes."""
    if stream is None:
        return
    try:
        async for chunk in stream:
            into += chunk[: max(0, cap - len(into))]
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


def first_line(output: bytes, redact: Callable[[str], str]) -> str:
    """Return the first non-blank line of ``output``, redacted and cut to a short line."""
    text = output.decode("utf-8", "replace")
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = "".join(ch if ch.isprintable() else "?" for ch in redact(line))
    return line if len(line) <= LINE else line[:LINE] + "..."
