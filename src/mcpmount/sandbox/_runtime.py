"""Finding what a server needs to run: its program, the runtime under it, its script.

A sandbox shows the system read-only and nothing of the user's, so the server's own
files must be found and shown too. `program_paths` follows the command from PATH
through every symlink and ``#!`` line to the real binary, and for each file on the way
takes its install root: the directory above a ``bin/`` (a virtualenv, a Node install,
``~/.pyenv/versions/3.11.7``), the outermost ``node_modules`` around a package's file,
else the file alone. A virtualenv's base interpreter is found by the symlinks too.
Arguments naming an existing file (``python server.py``) are shown as that file alone:
a directory argument is data (a folder to serve), which ``read`` or ``write`` must grant.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["SYSTEM_DIRS", "Program", "program_paths", "resolve_command"]

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Shown read-only in every sandbox, so nothing under them is mounted again."""

_MAX_HOPS = 16
"""Symlinks and ``#!`` lines followed from one command, at most."""


class Program:
    """The command as run: its absolute path, and the paths the sandbox must show."""

    def __init__(self, executable: str, paths: Sequence[str]) -> None:
        self.executable = executable
        """The command resolved on PATH (not through its symlinks: ``argv[0]`` matters)."""
        self.paths = tuple(paths)
        """Files and directories to mount read-only, outermost first, none under another."""


def resolve_command(command: str, env: Mapping[str, str], cwd: str | None) -> str:
    """Return the absolute path ``command`` runs, looked up on the child's PATH.

    Raises:
        FileNotFoundError: If it is found nowhere (the unsandboxed spawn says the same).
    """
    if "/" in command:
        found = os.path.join(cwd or os.getcwd(), command)
        if os.path.isfile(found):
            return os.path.abspath(found)
    else:
        path = env.get("PATH", os.defpath)
        found = shutil.which(command, path=path)
        if found is not None:
            return os.path.abspath(found)
    raise FileNotFoundError(2, "No such file or directory", command)


def program_paths(executable: str, args: Iterable[str], cwd: str | None) -> Program:
    """Return what running ``executable`` with ``args`` needs to see (see the module)."""
    found: list[str] = []
    _follow(executable, found, hops=0)
    base = cwd or os.getcwd()
    for arg in args:
        if not arg or arg.startswith("-") or "\0" in arg:
            continue
        path = os.path.join(base, arg)
        if os.path.isfile(path):
            root = _install_root(os.path.abspath(path))
            found.append(root if root.endswith("node_modules") else os.path.abspath(path))
            _follow(os.path.realpath(path), found, hops=1)
    return Program(executable, _outermost(found))


def _follow(path: str, found: list[str], hops: int) -> None:
    """Add the install root of ``path`` and of every symlink and interpreter behind it."""
    while hops < _MAX_HOPS:
        hops += 1
        found.append(_install_root(os.path.abspath(path)))
        if os.path.islink(path):
            path = os.path.join(os.path.dirname(path), os.readlink(path))
            continue
        interpreter = _interpreter(path)
        if interpreter is None:
            return
        path = interpreter


def _interpreter(path: str) -> str | None:
    """The program a script's ``#!`` line runs (through ``/usr/bin/env NAME``), if any."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return shutil.which(names[0]) if names else None
    return words[0]


def _install_root(path: str) -> str:
    parts = Path(path).parts
    if "node_modules" in parts:  # a package's file needs its dependencies beside it
        return str(Path(*parts[: parts.index("node_modules") + 1]))
    parent = os.path.dirname(path)
    if os.path.basename(parent) == "bin" and os.path.dirname(parent) not in ("/", "/usr"):
        return os.path.dirname(parent)
    return path


def _outermost(paths: Iterable[str]) -> list[str]:
    """Drop duplicates, system paths, missing paths and paths under another one."""
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not os.path.exists(path) or path == "/":
            continue
        if any(_within(path, outer) for outer in (*SYSTEM_DIRS, *kept)):
            continue
        kept.append(path)
    return kept


def _within(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer.rstrip("/") + "/")
