"""The seccomp filters of a code run: no new processes, no programs, no sockets but unix.

Why seccomp as well as bubblewrap: the namespaces hide the host, but inside them the
program could still start processes (uid 0 ignores ``RLIMIT_NPROC``, so a fork bomb is
stopped by nothing else), run the system's programs, or open sockets. Two classic BPF
programs, built with libseccomp (through ``pyseccomp``, which exports them as bytes):

- `sandbox_filter`, loaded by bubblewrap (``--seccomp FD``) before it starts Python:
  ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD`` (threads stay allowed),
  ``socket`` of any family but ``AF_UNIX`` (whose only peers are in the sandbox's own
  empty network namespace and tmpfs folders), ``unshare``, ``setns``, ``ptrace``,
  ``process_vm_*``, the keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd`` and
  io_uring (whose operations would bypass the filter) fail with ``EPERM``; ``clone3``
  fails with ``ENOSYS``, so glibc falls back to ``clone``, whose flags the filter can read
  (``clone3`` passes them in memory, which seccomp cannot see). A system call of another
  architecture (``int 0x80`` on x86-64) kills the process.
- `exec_filter`: ``execve`` and ``execveat`` fail with ``EPERM``. bubblewrap applies its
  filter just before it execs Python, so this one is loaded by the child itself
  (``_child``) before the model's code runs; filters stack, none can be removed.

Each is built once per process: loading libseccomp costs ~0.1 s (ctypes finds it
through ``ldconfig``), building a filter well under a millisecond.
"""

from __future__ import annotations

import errno
import functools
import os
import socket
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcpmount.errors import SandboxUnavailableError

if TYPE_CHECKING:
    import pyseccomp  # pyright: ignore[reportMissingTypeStubs]

__all__ = ["exec_filter", "sandbox_filter", "seccomp_problem"]

_INSTALL_HINT = "install libseccomp (apt install libseccomp2, dnf install libseccomp)"

_CLONE_THREAD = 0x00010000

_DENIED = (
    "fork",
    "vfork",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
)
"""Denied whatever their arguments (names this architecture lacks, as ``fork`` on arm64,
are left out by libseccomp)."""


def seccomp_problem() -> str | None:
    """None when the filters can be built and loaded here, else what is missing."""
    if not sys.platform.startswith("linux"):
        return f"seccomp is Linux only (this is {sys.platform})"
    try:
        with open("/proc/self/status") as status:
            if not any(line.startswith("Seccomp:") for line in status):
                return "this kernel has no seccomp (CONFIG_SECCOMP_FILTER)"
    except OSError as exc:
        return f"cannot read /proc/self/status ({exc.strerror})"
    try:
        sandbox_filter()
    except SandboxUnavailableError as exc:
        return str(exc)
    return None


def sandbox_filter() -> bytes:
    """The filter bubblewrap loads (see the module).

    Raises:
        SandboxUnavailableError: If libseccomp cannot be loaded (what to install).
    """
    return _filters()[0]


def exec_filter() -> bytes:
    """The filter the child loads itself: no ``execve``, no ``execveat``."""
    return _filters()[1]


@functools.cache
def _filters() -> tuple[bytes, bytes]:
    try:
        import pyseccomp as seccomp  # pyright: ignore[reportMissingTypeStubs]
    except (ImportError, RuntimeError, OSError) as exc:
        raise SandboxUnavailableError(
            f"code mode needs libseccomp, which cannot be loaded ({exc}); {_INSTALL_HINT}"
        ) from None
    deny = seccomp.ERRNO(errno.EPERM)

    def rules(denied: Iterable[str]) -> seccomp.SyscallFilter:
        made = seccomp.SyscallFilter(seccomp.ALLOW)
        made.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        for name in denied:
            try:
                made.add_rule(deny, name)
            except OSError as exc:  # a name libseccomp does not know at all
                if exc.errno not in (errno.EINVAL, errno.EDOM, errno.EFAULT):
                    raise
        return made

    sandbox = rules(_DENIED)
    sandbox.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
    sandbox.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    sandbox.add_rule(deny, "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    return _export(sandbox), _export(rules(("execve", "execveat")))


def _export(rules: pyseccomp.SyscallFilter) -> bytes:
    """The filter as the kernel loads it (``struct sock_filter`` array)."""
    fd = os.memfd_create("seccomp", os.MFD_CLOEXEC)
    with open(fd, "w+b") as file:
        rules.export_bpf(file)
        file.seek(0)
        return file.read()
