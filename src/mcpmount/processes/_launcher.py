"""A small launcher that keeps every process a server starts within reach, on Linux.

A process group holds a server's helpers only until one calls ``setsid()``: a daemon that
forks twice and starts a session of its own is re-parented to init, outside the group and
outside any ancestor we could walk. Linux has an answer that needs no privilege: a
*child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``) gets the orphans of its
descendants instead of init. The host must not become one (it would then inherit, and
have to reap, every orphan of everything it runs, which a library has no business
doing), and the registry's watchdog is a sibling of the servers, not their ancestor. So
each unsandboxed server on Linux runs under this launcher: our own interpreter with the
standard library only (``python -I -S -c``), which makes itself a subreaper, forks the
server with its stdio, and waits.

The launcher leads the server's process group, so the group's signals reach it too. When
the server exits, or when SIGTERM (or SIGINT, SIGHUP) comes, it ends every process left
below it, the re-parented daemons included: SIGTERM, `SWEEP_GRACE`, SIGKILL, until it has
no child. A server that outlives SIGTERM by `TERM_GRACE` is killed by the launcher itself,
so the host's and the watchdog's SIGKILL, which would kill the launcher before its sweep,
wait longer for it (`ProcessGroup` and `Reaper` know how long). It then exits with the
server's status (killed by the same signal, or ``128 + N`` for a signal that dumps core).
The server gets the environment the launcher was given, before the interpreter touched
it (``/proc/self/environ``: Python adds ``LC_CTYPE`` in the C locale).

A sandboxed server needs none of this: bwrap's PID namespace ends everything in it when
the server exits. Elsewhere (macOS) there is no subreaper; a daemon that leaves the group
is named in a warning, as before.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["KILL_WAIT", "launched_argv", "launcher_works"]

KILL_WAIT = 1.0
"""Seconds the launcher keeps sending SIGKILL to what is left before it gives up."""

# argv is ``-c TERM_GRACE SWEEP_GRACE EXECUTABLE SERVER...``. Signals are taken with
# sigwaitinfo, never by handlers: the launcher does nothing between them, and a wait can be
# bounded. Only built-in modules: ``os`` and ``signal`` (enum, functools, collections) would
# cost as much again as the interpreter's start.
_SCRIPT = f"""
import posix as os, _signal as S, sys, time
WANTED = {{S.SIGCHLD, S.SIGTERM, S.SIGINT, S.SIGHUP}}
S.signal(S.SIGCHLD, lambda *_: None)
old = S.pthread_sigmask(S.SIG_BLOCK, WANTED)
try:  # prctl(PR_SET_CHILD_SUBREAPER, 1) through _ctypes: importing ctypes costs more
    import _ctypes
    class Int(_ctypes._SimpleCData):
        _type_ = "i"
    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL
        _restype_ = Int
    class Libc:
        _handle = _ctypes.dlopen(None)
    done = Function(("prctl", Libc()))(36, 1, 0, 0, 0) == 0
except Exception:
    done = False
if not done:
    try:
        import ctypes
        done = ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0
    except Exception:
        pass
if not done:
    os.write(2, b"mcpmount launcher: cannot become a subreaper; daemons may outlive this\\n")
with open("/proc/self/environ", "rb") as f:
    env = dict(v.split(b"=", 1) for v in f.read().split(b"\\0") if b"=" in v)
TERM, SWEEP = float(sys.argv[1]), float(sys.argv[2])
executable, argv = sys.argv[3], sys.argv[4:]
server = os.fork()
if server == 0:
    try:
        for sig in (S.SIGPIPE, S.SIGXFSZ, S.SIGCHLD):
            S.signal(sig, S.SIG_DFL)
        S.pthread_sigmask(S.SIG_SETMASK, old)
        os.execve(executable, argv, env)
    except BaseException as exc:
        os.write(2, f"mcpmount launcher: cannot run {{argv[0]!r}}: {{exc}}\\n".encode())
    os._exit(127)
null = os.open("/dev/null", os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)
os.close(null)
me, group, status = os.getpid(), os.getpgrp(), None

def reap():
    global status
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        if pid == server:
            status = st

def below():
    found, stack = [], [me]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{{pid}}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{{pid}}/task/{{tid}}/children", "rb") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            found += kids
            stack += kids
    if not found and reap():  # no children lists (CONFIG_PROC_CHILDREN): ask everyone
        parents = {{}}
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{{name}}/stat", "rb") as f:
                    stat = f.read()
                ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
                parents.setdefault(ppid, []).append(int(name))
            except (OSError, ValueError, IndexError):
                continue
        stack = [me]
        while stack:
            kids = parents.get(stack.pop(), [])
            found += kids
            stack += kids
    return found

def send(sig, pids):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass

def escapees():
    out = []
    for pid in below():
        try:
            if os.getpgid(pid) != group:
                out.append(pid)
        except OSError:
            pass
    return out

ending = None
while status is None:
    if ending is None:
        info = S.sigwaitinfo(WANTED)
    else:
        left = ending + TERM - time.monotonic()
        info = S.sigtimedwait(WANTED, left) if left > 0 else None
        if info is None:
            send(S.SIGKILL, below())
            break
    if info.si_signo == S.SIGCHLD:
        reap()
    elif ending is None:
        ending = time.monotonic()
        send(S.SIGTERM, escapees())  # the group had its own
if reap():
    send(S.SIGTERM, below())
    deadline = time.monotonic() + SWEEP
    while reap() and time.monotonic() < deadline:
        S.sigtimedwait(WANTED, 0.02)
    deadline = time.monotonic() + {KILL_WAIT}
    while reap() and time.monotonic() < deadline:
        send(S.SIGKILL, below())
        S.sigtimedwait(WANTED, 0.02)
    for pid in below():
        os.write(2, f"mcpmount launcher: could not end pid {{pid}}\\n".encode())
if status is None:
    os._exit(1)
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    if sig not in (3, 4, 5, 6, 7, 8, 11, 24, 25, 31):  # signals that dump core
        S.signal(sig, S.SIG_DFL)
        S.pthread_sigmask(S.SIG_UNBLOCK, {{sig}})
        os.kill(me, sig)
    os._exit(128 + sig)
os._exit(os.WEXITSTATUS(status))
"""


def launcher_works() -> bool:
    """Whether servers can run under the launcher here: Linux, and an interpreter to run it.

    A frozen host (PyInstaller and the like) has no interpreter to run a script with.
    """
    return sys.platform == "linux" and bool(sys.executable) and not getattr(sys, "frozen", False)


def launched_argv(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | Path | None,
    *,
    term_grace: float,
    sweep_grace: float,
) -> list[str]:
    """Return the command line that runs ``argv`` under the launcher.

    ``term_grace`` is how long the server gets after SIGTERM before the launcher kills it;
    ``sweep_grace`` how long what it left gets after SIGTERM.

    The command is looked up first, on the child's ``PATH`` as a direct spawn would, so a
    missing or non-executable one fails here as it would there, not as an exit of the
    launcher.

    Raises:
        FileNotFoundError: If the command is not found.
        PermissionError: If it is found but not executable.
    """
    command = argv[0]
    executable = command
    if os.sep in command:
        path = os.path.join(cwd, command) if cwd is not None else command
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", command)
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise PermissionError(13, "Permission denied", command)
    elif (found := shutil.which(command, path=env.get("PATH", os.defpath))) is not None:
        executable = os.path.abspath(found)
    else:
        raise FileNotFoundError(2, "No such file or directory", command)
    grace = [f"{term_grace:g}", f"{sweep_grace:g}"]
    return [sys.executable, "-I", "-S", "-c", _SCRIPT, *grace, executable, *argv]
