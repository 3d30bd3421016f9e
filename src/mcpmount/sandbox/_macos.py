"""The sandbox-exec profile of a sandboxed server (macOS).

macOS has no mount namespaces: a Seatbelt profile decides each access instead. The
profile denies by default, then allows what the Linux sandbox shows:

- process basics: exec and fork, signals and process information within the sandbox
  only (``same-sandbox``: no signal reaches a process outside), sysctl reads, the Mach
  services every program looks up, POSIX shared memory and semaphores;
- reads of the system (``/usr``, ``/System``, ``/Library``, ``/bin``, ``/sbin``,
  ``/private/etc``, ``/dev``, ``/opt/homebrew``...) and of the program's own paths, and
  metadata of every directory (``realpath()`` walks them; no listing, no contents);
- reads and writes of a private home and ``TMPDIR`` (directories mcpmount makes for the
  server and removes after it), of ``/dev/null`` and the terminals, and of ``write``;
  reads of ``read``; where one lies inside another, rules outer to inner (the last
  matching rule wins), so a ``read`` file in a ``write`` folder stays read-only;
- the network: none, all (``network = true``), or only the proxy's loopback port for a
  host allow-list (its ``HTTPS_PROXY``).

`sandbox_exec_profile` is pure, and unit-tested for its text: sandbox-exec cannot run on
Linux. The profile language has no ``no_new_privs``: setuid binaries are the system's own,
read-only, and a forked helper stays in the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from mcpmount.sandbox._policy import SandboxPolicy

__all__ = ["sandbox_exec_profile"]

_SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/timezone",
    "/opt/homebrew",
    "/dev",
)

_MACH_SERVICES = (
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.bsd.dirhelper",
    "com.apple.logd",
    "com.apple.securityd.xpc",
    "com.apple.trustd",
    "com.apple.trustd.agent",
)


def _quote(path: str) -> str:
    """A profile string literal: JSON's escaping is the profile language's (\\", \\\\)."""
    return json.dumps(path, ensure_ascii=False)


def _subpaths(paths: Iterable[str]) -> str:
    return " ".join(f"(subpath {_quote(p)})" for p in paths)


def _within(path: str, outer: str) -> bool:
    return path != outer and path.startswith(outer.rstrip("/") + "/")


def _nested(readable: list[str], writable: tuple[str, ...]) -> list[str]:
    """Rules that keep each path's own mode inside another's: the last matching rule
    wins, so they go outer to inner, a read path in a write path denied writes again and
    a write path inside that allowed them again."""
    rules: list[tuple[str, str]] = [
        (path, f"(deny file-write* (subpath {_quote(path)}))")
        for path in readable
        if any(_within(path, outer) for outer in writable)
    ]
    rules += [
        (path, f"(allow file-read* file-write* (subpath {_quote(path)}))")
        for path in writable
        if any(_within(path, outer) for outer, _ in rules)
    ]
    return [rule for _, rule in sorted(rules, key=lambda rule: rule[0].count("/"))]


def sandbox_exec_profile(
    policy: SandboxPolicy,
    program_paths: Iterable[str],
    *,
    home: str,
    tmp: str,
    proxy_port: int | None = None,
) -> str:
    """Return the Seatbelt profile for one server (see the module).

    Args:
        policy: What the server may read, write and reach.
        program_paths: The program and its runtime (`program_paths`), read-only.
        home: The server's private home directory, read-write.
        tmp: Its private ``TMPDIR``, read-write.
        proxy_port: The loopback port of the proxy, with a host allow-list.
    """
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow process-info* (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow ipc-posix-shm ipc-posix-sem)",
        f"(allow mach-lookup {' '.join(f'(global-name {_quote(s)})' for s in _MACH_SERVICES)})",
        "(allow file-read-metadata (vnode-type DIRECTORY))",
        '(allow file-read* (literal "/") (literal "/etc") (literal "/var") (literal "/tmp"))',
        f"(allow file-read* {_subpaths(_SYSTEM_READ)})",
        f"(allow file-read* file-write* {_subpaths((home, tmp))})",
        '(allow file-read* file-write* (literal "/dev/null") (literal "/dev/tty") '
        '(regex #"^/dev/ttys[0-9]+$"))',
    ]
    readable = [*program_paths, *policy.read]
    if readable:
        lines.append(f"(allow file-read* {_subpaths(readable)})")
    if policy.write:
        lines.append(f"(allow file-read* file-write* {_subpaths(policy.write)})")
    lines += _nested(readable, policy.write)
    if policy.network is True:
        lines.append("(allow network*)")
    elif proxy_port is not None:
        lines.append(f'(allow network-outbound (remote tcp "localhost:{proxy_port}"))')
    return "\n".join(lines) + "\n"
