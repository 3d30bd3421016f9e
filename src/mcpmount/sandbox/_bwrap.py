"""The bubblewrap command line of a sandboxed server (Linux).

bwrap starts from an empty root and mounts only what it is told, in order:

- the system read-only (`SYSTEM_DIRS`, and the few files of ``/etc`` programs read:
  users, name resolution, TLS roots, time zone, the dynamic linker's cache);
- a fresh ``/proc`` (of the server's own PID namespace), a minimal ``/dev``, and empty
  tmpfs ``/tmp`` and home (at the path ``$HOME`` names, so paths under it still work);
- the program and its runtime read-only (`program_paths`), ``read`` read-only and
  ``write`` read-write, each at its own path, outer before inner: a path inside another
  keeps its own mode (a ``read`` file in a ``write`` folder stays read-only), and only
  what holds the home is mounted before the home's tmpfs, which nothing else hides.

It unshares every namespace bwrap can (user where needed, PID, IPC, UTS, cgroup, and the
network unless ``network = true``); in a new network namespace only a loopback is up.
bwrap always sets ``no_new_privs`` (no setuid binary can raise privileges inside), and
``--cap-drop ALL`` also drops the capabilities root would keep. ``--die-with-parent``
kills the sandbox if mcpmount dies. ``--new-session`` is left out on purpose: the server
already runs in a session of its own with no controlling terminal (so there is no terminal
to push input into), and it must stay in mcpmount's process group for the group to be
stopped and swept. The PID namespace ends every process in it, also one that called
``setsid()``, when the server exits.

With a host allow-list, the network stays unshared and a forwarder (`FORWARDER`, run by
mcpmount's own Python before the server is exec'd) listens on ``127.0.0.1:3128`` inside
and relays each connection to the proxy's unix socket, mounted at `PROXY_SOCKET`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from mcpmount.sandbox._policy import SandboxPolicy
from mcpmount.sandbox._runtime import SYSTEM_DIRS, Program

__all__ = ["FORWARDER", "PROXY_PORT", "PROXY_SOCKET", "bwrap_argv", "python_paths"]

PROXY_SOCKET = "/run/mcpmount/proxy.sock"
"""Where the proxy's unix socket is mounted inside the sandbox."""

PROXY_PORT = 3128
"""The loopback port the in-sandbox forwarder listens on (its network namespace is empty)."""

_ETC = (
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "resolv.conf",
    "services",
    "protocols",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "localtime",
    "timezone",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "mime.types",
    "os-release",
)
"""What of /etc is shown: never all of it (``shadow`` would be readable by uid 0)."""

_ETC_PRIVATE = ("/etc/ssl/private", "/etc/pki/tls/private")
"""Folders of private keys inside what `_ETC` shows, covered with an empty tmpfs."""

FORWARDER = """
import os, socket, sys, threading
port, target, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
listener = socket.socket()
listener.bind(("127.0.0.1", port))
listener.listen(64)
if os.fork():
    listener.close()
    os.execv(argv[0], argv)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
def pump(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for end, how in ((dst, socket.SHUT_RDWR), (src, socket.SHUT_RD)):
            try:
                end.shutdown(how)
            except OSError:
                pass
while True:
    inside, _ = listener.accept()
    outside = socket.socket(socket.AF_UNIX)
    try:
        outside.connect(target)
    except OSError:
        inside.close()
        outside.close()
        continue
    for pair in ((inside, outside), (outside, inside)):
        threading.Thread(target=pump, args=pair, daemon=True).start()
"""
"""Run as ``python -I -S -c FORWARDER PORT SOCKET PROGRAM ARGS...``: it listens, forks a
relay that lets go of the server's stdio, and execs the server; the standard library only.
A side that fails (a client that resets) shuts the other down, so the proxy's end closes
too, and stops reading its own (what the other side still sends is passed on).
When the server exits the PID namespace ends, and the relay with it."""


def python_paths() -> tuple[str, str]:
    """Return mcpmount's real interpreter and its install root, to run `FORWARDER`."""
    executable = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    return executable, os.path.realpath(sys.base_prefix)


def bwrap_argv(
    bwrap: str,
    policy: SandboxPolicy,
    program: Program,
    args: Sequence[str],
    *,
    home: str,
    cwd: str,
    proxy_socket: str | None = None,
) -> list[str]:
    """Return the command line that runs ``program`` with ``args`` under ``policy``.

    Args:
        bwrap: The bwrap executable.
        policy: What the server may see and reach.
        program: The resolved command and the paths it needs.
        args: The server's arguments.
        home: The path of the private home (``$HOME`` as the server sees it).
        cwd: The directory the server starts in (created empty unless mounted).
        proxy_socket: The proxy's unix socket, with a host allow-list.
    """
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    if policy.network is True:
        argv.append("--share-net")
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for name in _ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for private in _ETC_PRIVATE:  # TLS private keys: readable by uid 0, which root keeps inside
        if os.path.isdir(private):
            argv += ["--tmpfs", private]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    command = [program.executable, *args]
    binds = [(path, "--ro-bind") for path in program.paths]
    if proxy_socket is not None:
        python, root = python_paths()
        binds.append((root, "--ro-bind"))
        command = [python, "-I", "-S", "-c", FORWARDER, str(PROXY_PORT), PROXY_SOCKET, *command]
        argv += ["--bind", proxy_socket, PROXY_SOCKET]
    binds += [(path, "--ro-bind") for path in policy.read]
    binds += [(path, "--bind") for path in policy.write]
    mounts = [(path, [flag, path, path]) for path, flag in binds]
    mounts += [  # a symlink alone, where nothing shown holds it
        (path, ["--symlink", target, path])
        for path, target in program.links
        if not any(_within(path, shown) for shown, _ in binds)
    ]
    # Inner paths win whatever their mode: mounted after (deeper), a read path inside a
    # write path stays read-only and a write path inside a read path stays writable; at
    # the same path read-only wins. What holds the home is mounted before its tmpfs, the
    # rest after, so the private home is never hidden.
    mounts.sort(key=lambda mount: (_depth(mount[0]), mount[1][0] != "--bind"))
    private = home not in ("/", "/tmp")
    for path, mount in mounts:
        if private and path != home and _within(home, path):
            argv += mount
    if private:
        argv += ["--tmpfs", home]
    argv += ["--dir", cwd]
    for path, mount in mounts:
        if not (private and path != home and _within(home, path)):
            argv += mount
    return [*argv, "--chdir", cwd, "--", *command]


def _depth(path: str) -> int:
    return len(Path(path).parts)


def _within(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer.rstrip("/") + "/")
