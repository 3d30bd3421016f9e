"""The sandbox a program runs in: whether one can be made here, and its command line.

Each run gets a fresh bubblewrap sandbox, leaner than a stdio server's (``mcpmount.sandbox``)
because it runs only mcpmount's own interpreter on the standard library:

- the system folders read-only (`SYSTEM_DIRS`) and the interpreter's install root
  (`python_paths`, where it is not among them), the dynamic linker's cache, and nothing
  else of the host: no ``/etc`` files beyond that, no home, no project folder;
- a fresh ``/proc`` of its own PID namespace, a minimal ``/dev``, and three empty tmpfs
  folders: ``/tmp``, the home (`HOME`) and the scratch folder it starts in (`SCRATCH`),
  each at most the run's memory limit in size (their pages are memory the address-space
  limit does not count);
- every namespace unshared (no network: only a loopback that nothing listens on),
  ``--cap-drop ALL``, ``--die-with-parent``, and the seccomp filter of ``_seccomp``;
- ``python -I -S``: no site-packages, no ``PYTHON*`` variables, no user folders on the path.

The parts that never change are built once per process (`command_prefix`), so a run's
start-up pays only for the spawn.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from mcpmount.codemode import _child
from mcpmount.codemode._seccomp import seccomp_problem
from mcpmount.sandbox import SYSTEM_DIRS, Tool, find_tool, python_paths

__all__ = ["ENV", "HOME", "SCRATCH", "code_sandbox_problem", "command_prefix", "sandbox_argv"]

HOME = "/home/sandbox"
"""The program's ``$HOME``: an empty tmpfs."""

SCRATCH = "/scratch"
"""The folder the program starts in: an empty tmpfs, its own to write."""

ENV = {"HOME": HOME, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
"""The whole environment of the sandbox: nothing of mcpmount's (which may hold secrets)."""


def code_sandbox_problem() -> str | None:
    """None when code can run sandboxed here, else what is missing and what to install.

    It may run a trial of bwrap (once per process) and load libseccomp: call it off the
    event loop (`run_code` does).
    """
    if not sys.platform.startswith("linux"):
        return (
            f"code mode runs programs only on Linux (bubblewrap and seccomp), not on {sys.platform}"
        )
    tool = find_tool()
    if not isinstance(tool, Tool):
        return f"code mode needs a sandbox: {tool}"
    return seccomp_problem()


@functools.cache
def command_prefix(bwrap: str) -> tuple[str, ...]:
    """What every run's command line starts with (see the module); built once."""
    python, root = python_paths()
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    shown: list[str] = []
    for path in (root, python):  # a uv or pyenv Python lives outside the system folders
        if not any(_within(path, outer) for outer in (*SYSTEM_DIRS, *shown)):
            shown.append(path)
            argv += ["--ro-bind", path, path]
    argv += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return (*argv, "--proc", "/proc", "--dev", "/dev")


@functools.cache
def _child_source() -> str:
    return Path(_child.__file__).read_text()


def sandbox_argv(
    bwrap: str, *, memory_bytes: int, seccomp_fd: int, fds: tuple[int, int]
) -> list[str]:
    """The command line of one run.

    Args:
        bwrap: The bwrap executable.
        memory_bytes: The run's memory limit: the size of each tmpfs.
        seccomp_fd: Where bwrap reads the seccomp filter from.
        fds: The child's ends of the requests and answers pipes.
    """
    python, _ = python_paths()
    size = str(memory_bytes)
    folders: list[str] = []
    for folder in ("/tmp", HOME, SCRATCH):
        folders += ["--size", size, "--tmpfs", folder]
    return [
        *command_prefix(bwrap),
        *folders,
        "--chdir",
        SCRATCH,
        "--seccomp",
        str(seccomp_fd),
        "--",
        python,
        "-I",
        "-S",
        "-B",
        "-c",
        _child_source(),
        *map(str, fds),
    ]


def _within(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer.rstrip("/") + "/")
