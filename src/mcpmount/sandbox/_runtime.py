"""Finding what a server needs to run: its program, the runtime under it, its script.

A sandbox shows the system read-only and nothing of the user's, so the server's own
files must be found and shown too, and nothing beside them. `program_paths` follows the
command from the child's PATH through every symlink and ``#!`` line (``/usr/bin/env
NAME`` looked up on the child's PATH too) to the real binary, and for each file on the
way takes what it belongs to:

- the outermost ``node_modules`` around it (a package needs its dependencies beside it:
  npx's ``~/.npm/_npx/<hash>/node_modules``, a project's);
- the virtualenv around it, the directory holding ``pyvenv.cfg`` (pipx's
  ``~/.local/share/pipx/venvs/X``, uv's ``~/.local/share/uv/tools/X``, uvx's cached
  environments, a project's ``.venv``), and the prefix of the base interpreter its
  ``pyvenv.cfg`` names;
- the install prefix above a ``bin/`` that is recognisably one: it holds
  ``lib/pythonX.Y`` or ``lib/node_modules`` (pyenv's and uv's Pythons, nvm's
  ``~/.nvm/versions/node/vN``), never merely because the folder is named ``bin``;
- else the file alone; a symlink alone is recreated as a symlink.

None of these may be what `never_shown` forbids (the home, ``~/.local``, a project
root, a folder holding credentials). A prefix that is (``~/.local`` of ``pip install
--user``) is narrowed to the file and its ``lib/python*``; a virtualenv that is cannot
be narrowed, and the sandbox is refused, naming what to list in ``read`` instead.
Arguments naming an existing file (``python server.py``) are shown as that file alone:
a directory argument is data (a folder to serve), which ``read`` or ``write`` must grant.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mcpmount.sandbox._exposure import Exposure, SandboxUnavailableError

__all__ = ["SYSTEM_DIRS", "Program", "program_paths", "resolve_command"]

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Shown read-only in every sandbox, so nothing under them is mounted again."""

_MAX_HOPS = 16
"""Symlinks and ``#!`` lines followed from one command, at most."""


class Program:
    """The command as run: its absolute path, and the paths the sandbox must show."""

    def __init__(
        self, executable: str, paths: Sequence[str], links: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.executable = executable
        """The command resolved on PATH (not through its symlinks: ``argv[0]`` matters)."""
        self.paths = tuple(paths)
        """Files and directories to mount read-only, outermost first, none under another."""
        self.links = tuple(links)
        """Symlinks to recreate, ``(path, target)``, where the folder holding one is not shown."""


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
        found = shutil.which(command, path=env.get("PATH", os.defpath))
        if found is not None:
            return os.path.abspath(found)
    raise FileNotFoundError(2, "No such file or directory", command)


class _Walk:
    """One resolution: what is found, against which homes, on which PATH."""

    def __init__(
        self,
        homes: Sequence[str],
        search_path: str,
        granted: Sequence[str],
        private: Sequence[str] = (),
    ) -> None:
        self.homes = homes
        self.search_path = search_path
        self.granted = granted
        self.exposure = Exposure(homes, private)
        self.seen: set[str] = set()
        self.found: list[str] = []
        self.links: list[tuple[str, str]] = []

    def follow(self, path: str, hops: int) -> None:
        """Add what ``path`` and every symlink and interpreter behind it belong to."""
        while hops < _MAX_HOPS:
            hops += 1
            path = os.path.abspath(path)
            self.add(path)
            if os.path.islink(path):
                path = os.path.join(os.path.dirname(path), os.readlink(path))
                continue
            interpreter = self.interpreter(path)
            if interpreter is None:
                return
            path = interpreter

    def add(self, path: str) -> None:
        """Add the install ``path`` belongs to (see the module), or refuse."""
        if _system(path) or path in self.seen:
            return
        self.seen.add(path)
        if "/node_modules/" in path:  # a package's file needs its dependencies beside it
            parts = Path(path).parts
            self.keep(str(Path(*parts[: parts.index("node_modules") + 1])), path)
            return
        venv = _venv_of(path)
        if venv is not None:
            if venv not in self.found:
                self.keep(venv, path)
                base = _base_prefix(venv)
                if base is not None and not _system(base):
                    self.keep(base, base)
            return
        prefix = _prefix_of(path)
        if prefix is None:
            self.alone(path)
        elif self.hidden(prefix) is None:
            self.found.append(prefix)
        else:  # ~/.local of pip --user: the script, and the packages it imports
            self.alone(path)
            self.found += [str(p) for p in Path(prefix, "lib").glob("python*") if p.is_dir()]

    def hidden(self, path: str) -> str | None:
        return self.exposure.why(path)

    def keep(self, root: str, path: str) -> None:
        """Mount ``root`` whole, or refuse (``path`` needs it)."""
        why = self.hidden(root)
        if why is not None and any(_within(path, p) for p in self.granted):
            return  # what ``read`` or ``write`` grant shows it
        if why is not None:
            raise SandboxUnavailableError(
                f"its program {path} would need {root} shown, which a sandbox never "
                f"shows ({why}); list the folders it needs in read = [...] instead",
                hidden=root,
            )
        self.found.append(root)

    def alone(self, path: str, what: str = "program") -> None:
        """Mount the file ``path`` alone (recreate it, a symlink), or refuse."""
        why = self.hidden(path)
        if why is not None and any(_within(path, p) for p in self.granted):
            return
        if why is not None:
            raise SandboxUnavailableError(
                f"its {what} {path} is not shown in a sandbox ({why}); list it in "
                f"read = [...] if the server must see it",
                hidden=path,
            )
        if os.path.islink(path):
            self.links.append((path, os.readlink(path)))
        else:
            self.found.append(path)

    def grants(self, path: str) -> bool:
        """Whether ``read`` or ``write`` show ``path`` (as written, or where it leads)."""
        real = os.path.realpath(path)
        return any(_within(path, p) or _within(real, p) for p in self.granted)

    def interpreter(self, path: str) -> str | None:
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
            return shutil.which(names[0], path=self.search_path) if names else None
        return words[0]


def program_paths(
    executable: str,
    args: Iterable[str],
    cwd: str | None,
    env: Mapping[str, str] | None = None,
    homes: Sequence[str] = (),
    granted: Sequence[str] = (),
    private: Sequence[str] = (),
) -> Program:
    """Return what running ``executable`` with ``args`` needs to see (see the module).

    Args:
        executable: The command, resolved (`resolve_command`).
        args: Its arguments; those naming a file are shown as that file.
        cwd: Where it starts, for relative arguments.
        env: The child's environment: its PATH finds ``#!/usr/bin/env NAME``.
        homes: The user's home directories, whose folders are never shown whole.
        granted: The ``read`` and ``write`` paths: what they show needs no refusal.
        private: More folders never shown whole nor from within (a custom ``token_dir``).

    Raises:
        SandboxUnavailableError: If the program cannot run without showing what a
            sandbox never shows (the message says what to list in ``read``).
    """
    walk = _Walk(homes, (env or {}).get("PATH", os.defpath), granted, private)
    walk.follow(executable, hops=0)
    base = cwd or os.getcwd()
    for arg in args:
        if not arg or arg.startswith("-") or "\0" in arg:
            continue
        path = os.path.abspath(os.path.join(base, arg))
        if walk.grants(path):
            continue  # data ``read``/``write`` show as they say (a database stays writable)
        if os.path.isfile(path):
            parts = Path(path).parts
            if "node_modules" in parts:
                walk.add(path)
            else:
                walk.alone(path, "argument")
            walk.follow(os.path.realpath(path), hops=1)
    kept = _outermost(walk.found)
    links = [
        link for link in dict(walk.links).items() if not any(_within(link[0], p) for p in kept)
    ]
    return Program(executable, kept, links)


def _system(path: str) -> bool:
    return any(_within(path, outer) for outer in SYSTEM_DIRS)


def _venv_of(path: str) -> str | None:
    """The virtualenv ``path`` lies in (the nearest folder above with ``pyvenv.cfg``)."""
    parent = os.path.dirname(path)
    while parent != "/":
        if os.path.isfile(parent + "/pyvenv.cfg"):
            return parent
        parent = os.path.dirname(parent)
    return None


def _base_prefix(venv: str) -> str | None:
    """The install prefix of a virtualenv's base interpreter (its ``pyvenv.cfg`` ``home``)."""
    try:
        text = Path(venv, "pyvenv.cfg").read_text(errors="replace")
    except OSError:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    if values.get("executable"):  # the real interpreter, where ``home`` may hold a link to it
        return _prefix_of(os.path.realpath(values["executable"]))
    if values.get("home"):
        return _prefix_of(os.path.join(values["home"], "python"))
    return None


def _prefix_of(path: str) -> str | None:
    """The install prefix above ``path``'s ``bin/``, if it is recognisably one."""
    parent = os.path.dirname(path)
    if os.path.basename(parent) not in ("bin", "sbin"):
        return None
    prefix = os.path.dirname(parent)
    if prefix in ("/", "/usr") or not os.path.isdir(os.path.join(prefix, "lib")):
        return None
    names = os.listdir(os.path.join(prefix, "lib"))
    if any(name.startswith("python") or name == "node_modules" for name in names):
        return prefix
    return None


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
