"""A watchdog process that ends every server's process group when its host dies.

Closing a server reaps its whole process group, but a host killed by SIGKILL (or the
OOM killer, or a crash) runs no code at all, and a server that ignores stdin EOF would
outlive it, with every helper it forked. The parent-death signal would not do: it is
Linux only, it reaches the group leader alone, and ``npx`` or ``uvx`` servers are a
launcher whose real server is a child.

So the first stdio server a registry spawns starts one small watchdog, in a session of
its own (terminal signals do not reach it). The host writes ``+PGID GRACE`` and ``-PGID``
lines to its stdin as servers start and are reaped. When that pipe reaches EOF, because
the host closed it or because the host died and the kernel closed it, the watchdog sends
SIGTERM to every group still registered, waits up to each group's grace (`GRACE` by
default; longer for a group led by the subreaper launcher, which ends the daemons its
server left before it exits), sends SIGKILL to what is left, and exits. It needs only a
POSIX pipe and ``killpg``: it works wherever the stdio transport does.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys

import anyio

__all__ = ["GRACE", "Reaper"]

logger = logging.getLogger(__name__)

GRACE = 2.0
"""Seconds the watchdog gives the groups after SIGTERM before SIGKILL."""

_EXIT_WAIT = 2.0
"""How long closing waits for the watchdog to exit, beyond the longest grace it was given."""

_POLL = 0.01

# Run as ``python -I -S -c``: the standard library only, started in a few milliseconds.
_SCRIPT = f"""
import os, signal, sys, time
groups = {{}}
for line in sys.stdin.buffer:
    fields = line[1:].split()
    try:
        pgid = int(fields[0])
        grace = float(fields[1]) if len(fields) > 1 else {GRACE}
    except (ValueError, IndexError):
        continue
    if line[:1] == b"+":
        groups[pgid] = grace
    else:
        groups.pop(pgid, None)
def send(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True
start = time.monotonic()
groups = {{pgid: grace for pgid, grace in groups.items() if send(pgid, signal.SIGTERM)}}
while groups:
    time.sleep(0.02)
    late = time.monotonic() - start
    for pgid, grace in list(groups.items()):
        if late >= grace:
            send(pgid, signal.SIGKILL)
        elif send(pgid, 0):
            continue
        del groups[pgid]
"""


class Reaper:
    """One watchdog process per registry; see the module docstring.

    ``watch`` and ``unwatch`` are synchronous and never block (one short write to a pipe
    the watchdog keeps draining), so a transport can call them in the gap between
    spawning a process and owning it, where an ``await`` could leak the process.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._closed = False
        self._longest = GRACE

    def watch(self, pgid: int, grace: float = GRACE) -> None:
        """Have the watchdog end process group ``pgid`` if the host dies.

        ``grace`` is how long the group gets after SIGTERM before SIGKILL.
        """
        self._longest = max(self._longest, grace)
        self._send(f"+{pgid} {grace:g}\n")

    def unwatch(self, pgid: int) -> None:
        """Forget ``pgid`` (it was reaped); the id may now be reused by another group."""
        if self._process is not None:
            self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        if self._closed:
            return
        process = self._process or self._start()
        if process is None or process.stdin is None:
            return
        try:
            process.stdin.write(line.encode())
            process.stdin.flush()
        except OSError as exc:  # the watchdog died: servers are still reaped on close
            logger.warning("the process watchdog is gone (%s); a killed host may leak", exc)
            self._closed = True

    def _start(self) -> subprocess.Popen[bytes] | None:
        if not sys.executable:
            logger.info("no Python executable to run the process watchdog; skipping it")
            self._closed = True
            return None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            logger.warning("cannot start the process watchdog (%s); a killed host may leak", exc)
            self._closed = True
            return None
        return self._process

    async def aclose(self) -> None:
        """Stop the watchdog: it ends the groups still registered, then exits. Bounded."""
        self._closed = True
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._longest + _EXIT_WAIT):
            while process.poll() is None:
                await anyio.sleep(_POLL)
        if process.poll() is None:
            logger.warning("the process watchdog pid %d did not exit; killing it", process.pid)
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1.0)

    def __del__(self) -> None:
        # A registry that was never closed: the pipe closes with us, and the watchdog
        # ends what is left. Only the zombie needs reaping, which the OS does at exit.
        process = self._process
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
