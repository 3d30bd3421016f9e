"""A server process as the leader of its own process group, stopped and swept as a whole.

The server starts a new session, so its pid is also its process group id, and every helper
it forks stays in that group unless it calls ``setsid()`` or ``setpgid()``. Stopping
follows the MCP spec (close stdin, wait, SIGTERM, wait, SIGKILL) and then sweeps the
group, also when the leader exited by itself: the SDK's own ``stdio_client`` signals the
group only when the leader outlives its stdin, so a helper of a leader that exits
promptly would outlive it.

A helper that does leave the group (a daemon: ``setsid`` and a double fork) is out of
the group's reach. On Linux an unsandboxed process therefore runs under a launcher that
is a child subreaper (`mcpmount.processes._launcher`): it leads the group, gets every
orphan below it, and ends them all before it exits. What is still alive after a stop
that we know of (a process we may not signal, or no launcher) is named in a warning.

Linux gives the best view: a pidfd wakes us the moment the leader exits, and ``/proc``
tells live members from zombies and finds descendants that left the group. Elsewhere
(macOS has neither) the leader's exit is polled and the group is probed with signal 0.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import Process

from mcpmount.processes._launcher import KILL_WAIT, launched_argv, launcher_works
from mcpmount.processes._proc import escaped_descendants, has_children, scan_group, started_at

__all__ = ["LAUNCHED_GRACE", "STOP_BOUND", "ProcessGroup", "group_members"]

logger = logging.getLogger(__name__)

STDIN_GRACE = 2.0
"""Seconds a server gets to exit by itself after its stdin closes (the SDK's figure)."""

TERM_GRACE = 2.0
"""Seconds the process group gets after SIGTERM before SIGKILL."""

SWEEP_GRACE = 0.5
"""Seconds leftover group members get after SIGTERM once the leader is gone."""

LAUNCHED_GRACE = TERM_GRACE + SWEEP_GRACE + KILL_WAIT + 1.0
"""Seconds a group led by the launcher gets after SIGTERM before SIGKILL from outside: the
launcher kills the server itself after `TERM_GRACE` and sweeps what it left, which an
earlier SIGKILL (killing the launcher too) would cut short; plus slack for a loaded host."""

STOP_BOUND = STDIN_GRACE + 2 * LAUNCHED_GRACE + 2 * SWEEP_GRACE + TERM_GRACE
"""Worst case of `ProcessGroup.stop`: the stdin grace, TERM and KILL of the group (led by the
launcher), TERM and KILL of a sweep, the wait for the leader's reaping."""

_POLL_INTERVAL = 0.01
_GROUP_POLL_INTERVAL = 0.02


class ProcessGroup:
    """One spawned server process, leader of its own process group."""

    def __init__(
        self,
        process: Process,
        on_reaped: Callable[[int], None],
        *,
        launched: bool = False,
        label: str = "",
    ) -> None:
        self.process = process
        """The leader; its pipes are the server's stdin, stdout and stderr."""

        self.launched = launched
        """Whether the leader is the subreaper launcher, with the server its child."""

        self.label = label or "process"
        """What warnings call it, e.g. ``server 'fs'``."""

        self.exited = anyio.Event()
        """Set as soon as the leader has exited."""

        self._on_reaped = on_reaped
        _quiet_stdin_close_waiter(process)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | Path | None,
        on_reaped: Callable[[int], None],
        label: str = "",
        launcher: bool = True,
    ) -> ProcessGroup:
        """Start ``argv`` with piped stdio in a new session (so a new process group).

        ``on_reaped`` gets the exit code each time a wait for the leader's reaping ends;
        ``label`` names it in warnings. With ``launcher`` (and on Linux), it runs under the
        subreaper launcher, so that no process it starts can leave our reach; pass False
        where something else ends them all (bwrap's PID namespace).

        Raises:
            OSError: If the process cannot be spawned (e.g. ``FileNotFoundError``).
        """
        launched = launcher and launcher_works()
        if launched:
            argv = launched_argv(argv, env, cwd, term_grace=TERM_GRACE, sweep_grace=SWEEP_GRACE)
        # Shielded: cancelled once the child is forked, asyncio SIGKILLs the leader alone
        # (the launcher, which dies without its sweep), and what it already forked lives on.
        # The caller's cancellation lands at its next await, with the group to stop.
        process: Process | None = None
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                list(argv),
                stdin=PIPE,
                stdout=PIPE,
                stderr=PIPE,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
            )
        assert process is not None  # a shielded scope is not cancelled
        return cls(process, on_reaped, launched=launched, label=label)

    @property
    def pid(self) -> int:
        """The leader's pid; also the process group id."""
        return self.process.pid

    @property
    def term_grace(self) -> float:
        """Seconds the group gets after SIGTERM before SIGKILL (a watchdog's too)."""
        return LAUNCHED_GRACE if self.launched else TERM_GRACE

    @property
    def returncode(self) -> int | None:
        """The leader's exit code, once it has been reaped."""
        return self.process.returncode

    async def wait_exit(self) -> None:
        """Return, and set ``exited``, when the leader has exited.

        ``Process.wait()`` would also wait for stdout EOF, which never comes while a helper
        holds the pipe. A pidfd wakes us at once; polling ``returncode`` is the fallback.
        """
        if not self.exited.is_set():
            await _wait_leader_exit(self.process)
            self.exited.set()

    async def wait_reaped(self) -> None:
        """Wait until the leader has exited and been reaped, then report its exit code.

        The transport's own exit watcher may be gone: a caller's cancellation (a startup
        deadline) cancels it along with the other transport tasks, so this waits by itself.
        """
        await self.wait_exit()
        while self.process.returncode is None:
            await anyio.sleep(_POLL_INTERVAL)
        self._on_reaped(self.process.returncode)

    async def stop(self) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL it; then sweep the group.

        Our ends of stdout and stderr stay open (`close_pipes`), so what the server wrote
        last can still be read.
        """
        process = self.process
        assert process.stdin is not None
        escaped = await _escaped_descendants(self.pid)
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        with anyio.move_on_after(STDIN_GRACE):
            await self.wait_reaped()
        if not self.exited.is_set():
            logger.info(
                "server pid %d ignored stdin EOF for %gs; sending SIGTERM", self.pid, STDIN_GRACE
            )
            await self._terminate(self.term_grace)
        # The leader is gone (or was killed); helpers it forked into its group must not
        # outlive it, also when the leader exited in time by itself.
        if await self.members():
            await self._terminate(SWEEP_GRACE)
        with anyio.move_on_after(TERM_GRACE):
            await self.wait_reaped()
        if process.returncode is None:
            logger.warning("%s: pid %d survived SIGKILL; abandoning it", self.label, self.pid)
        self._warn_survivors(escaped)

    def _warn_survivors(self, escaped: list[tuple[int, int]]) -> None:
        """Warn of each process that left the group and is still running: never silent."""
        for pid, start in escaped:
            if started_at(pid) != start:
                continue
            why = (
                "it may not be signalled (another user's, or setuid)"
                if self.launched
                else "it left the process group (setsid or setpgid), and only Linux lets "
                "mcpmount follow such a process"
            )
            logger.warning(
                "%s (pid %d) left pid %d running after it was closed: %s; end it with "
                "`kill %d` (or `sudo kill %d`)",
                self.label,
                self.pid,
                pid,
                why,
                pid,
                pid,
            )

    async def close_pipes(self) -> None:
        """Close our ends of stdout and stderr, and asyncio's transport that holds them."""
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(
                    OSError, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    await stream.aclose()
        _close_subprocess_transport(self.process)

    async def members(self) -> list[int]:
        """`group_members`, with the /proc scan (if one is needed) off the event loop."""
        if not _group_exists(self.pid):
            return []
        return await anyio.to_thread.run_sync(scan_group, self.pid)

    async def _terminate(self, grace: float) -> None:
        """SIGTERM the group, wait up to ``grace`` for it to empty, then SIGKILL what is left."""
        if not self._signal(signal.SIGTERM):
            return
        if await self._wait_empty(grace):
            return
        logger.info("process group %d outlived SIGTERM by %gs; sending SIGKILL", self.pid, grace)
        self._signal(signal.SIGKILL)
        if not await self._wait_empty(grace):
            logger.warning("process group %d survived SIGKILL: %s", self.pid, await self.members())

    async def _wait_empty(self, timeout: float) -> bool:
        """Return whether every live member of the group is gone within ``timeout``.

        The leader's exit is awaited first (no polling with a pidfd): while it lives the
        group is certainly not empty, and scanning /proc for 30 servers at once would stall
        the loop.
        """
        with anyio.move_on_after(timeout):
            await self.wait_reaped()
            while await self.members():
                await anyio.sleep(_GROUP_POLL_INTERVAL)
            return True
        return False

    def _signal(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to the group; return False if the group no longer exists."""
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:
            logger.warning("no permission to signal some of process group %d", self.pid)
        return True


def group_members(pgid: int) -> list[int]:
    """Return the pids of live (non-zombie) processes in process group ``pgid``.

    Zombies count as dead: an orphaned helper stays a zombie until PID 1 reaps it, and
    some container inits never do, so ``killpg(pgid, 0)`` would report it alive forever.
    Without /proc, a group that answers signal 0 is reported as ``[pgid]``.
    """
    return scan_group(pgid) if _group_exists(pgid) else []


async def _escaped_descendants(leader: int) -> list[tuple[int, int]]:
    """Return (pid, start time) of the leader's live descendants outside its process group."""
    if not has_children(leader):
        return []  # the common case without a launcher: no /proc reads at all
    return await anyio.to_thread.run_sync(escaped_descendants, leader)


async def _wait_leader_exit(process: Process) -> None:
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # AttributeError: no pidfd_open (macOS, BSD)
        pidfd = None
    if pidfd is not None:
        try:
            await anyio.wait_readable(pidfd)
        finally:
            anyio.notify_closing(pidfd)
            os.close(pidfd)
    while process.returncode is None:
        await anyio.sleep(_POLL_INTERVAL)


def _group_exists(pgid: int) -> bool:
    """Probe the group with signal 0: cheap, and most groups are simply gone."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # members we may not signal (or zombies): it exists
    return True


def _quiet_stdin_close_waiter(process: Process) -> None:
    """Retrieve the error asyncio keeps for stdin's pipe if it breaks under a write.

    A server that dies while a write to its stdin waits in asyncio's buffer leaves that
    `BrokenPipeError` in the stdin writer's close waiter, which only ``wait_closed()``
    reads; before Python 3.11.4 (CPython gh-104340) asyncio reports it as "Future exception
    was never retrieved" once the process is collected. Our writer saw the same error and
    counted the server lost. A done-callback, not a wait: stdin may outlive its server.
    """
    writer = getattr(getattr(process, "_process", None), "stdin", None)
    closed = getattr(getattr(writer, "_protocol", None), "_stdin_closed", None)
    add_done_callback = getattr(closed, "add_done_callback", None)
    if callable(add_done_callback):
        add_done_callback(_retrieve)


def _retrieve(future: Any) -> None:
    if not future.cancelled():
        future.exception()


def _close_subprocess_transport(process: Process) -> None:
    """Close asyncio's subprocess transport, which stays open while a pipe end survives.

    Nothing public exposes it (the SDK does the same walk); without it the transport warns
    at garbage collection.
    """
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()
