"""The programs a config runs, as a host will find them: `stdio_servers`, `host_path`.

A host starts its servers with its own environment, not the user's shell's: Claude Desktop,
started from the desktop, has ``PATH=/usr/bin:/bin`` (or little more), so a ``uvx``,
``node`` or venv ``python3`` found in the shell is not found there. `host_path` looks each
bare command of the config up on this shell's ``PATH`` (and, for a script that starts with
``#!/usr/bin/env node``, its interpreter too) and returns the ``PATH`` the entry must give
them: the folders they are in, then the system's. A command that is not found here is named,
since the host will not find it either.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from mcpmount.configfile import Table, read_config

__all__ = ["SYSTEM_PATH", "RawServer", "host_path", "serve_transport", "stdio_servers"]

SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""Where every host finds the system's programs; an entry's ``PATH`` ends with them."""


@dataclass(frozen=True, slots=True)
class RawServer:
    """A stdio server of a config file as written: nothing expanded or validated."""

    name: str
    command: str
    args: tuple[str, ...]
    cwd: Path
    """Its working directory: ``cwd`` against the file's folder, else that folder."""


def stdio_servers(path: Path) -> list[RawServer]:
    """Return the stdio servers of the config file ``path``: ``[servers]`` of our TOML,
    ``mcpServers`` (or VS Code's ``servers``) of a host's JSON.

    Raises:
        ConfigError: If the file is missing or is not TOML or JSON.
    """
    document, is_json = read_config(path, [])
    key = "mcpServers" if is_json and "mcpServers" in document else "servers"
    return list(_stdio(document.get(key), path.absolute().parent))


def serve_transport(path: Path) -> str | None:
    """Return the ``transport`` the config file ``path`` gives ``[serve]``, if it gives one.

    Raises:
        ConfigError: If the file is missing or is not TOML or JSON.
    """
    serve = read_config(path, [])[0].get("serve")
    transport = cast("Table", serve).get("transport") if isinstance(serve, dict) else None
    return transport if isinstance(transport, str) else None


def _stdio(servers: object, folder: Path) -> Iterator[RawServer]:
    if not isinstance(servers, dict):
        return
    for name, raw in cast("Table", servers).items():
        if not isinstance(raw, dict):
            continue
        table = cast("Table", raw)
        command, args, cwd = table.get("command"), table.get("args", []), table.get("cwd")
        if not isinstance(command, str) or not isinstance(args, list):
            continue
        strings = tuple(arg for arg in cast("list[object]", args) if isinstance(arg, str))
        where = folder / cwd if isinstance(cwd, str) and "$" not in cwd else folder
        yield RawServer(name, command, strings, where)


def host_path(
    servers: Sequence[RawServer], environ: Mapping[str, str]
) -> tuple[str | None, list[str]]:
    """Return the ``PATH`` a host must give ``servers`` (None if the system's will do), and
    a note for each bare command this shell's ``PATH`` does not have."""
    shell = environ.get("PATH", os.defpath)
    folders: list[str] = []
    missing: list[str] = []
    for server in servers:
        command = server.command
        if "$" in command or os.sep in command or (os.altsep and os.altsep in command):
            continue  # a path, or the config's own variable (${MCPMOUNT_PYTHON})
        found = shutil.which(command, path=shell)
        if found is None:
            missing.append(
                f"servers.{server.name}: {command!r} is not on this shell's PATH, and "
                "the host will not find it either: install it, or give its full path"
            )
            continue
        folders.append(str(Path(found).parent))
        interpreter = _env_interpreter(Path(found))
        if interpreter is not None and (where := shutil.which(interpreter, path=shell)):
            folders.append(str(Path(where).parent))
    needed = [folder for folder in dict.fromkeys(folders) if folder not in SYSTEM_PATH]
    return (os.pathsep.join([*needed, *SYSTEM_PATH]) if needed else None), missing


def _env_interpreter(program: Path) -> str | None:
    """Return ``NAME`` of a script starting ``#!/usr/bin/env NAME`` (``npx`` is one for
    ``node``), which must be found on the same ``PATH``; else None."""
    try:
        with program.open("rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    words = first.decode("utf-8", "replace").removeprefix("#!").split()
    if not first.startswith(b"#!") or len(words) < 2 or Path(words[0]).name != "env":
        return None
    names = [word for word in words[1:] if not word.startswith("-")]
    return names[0] if names else None
