"""An mcpmount that would serve itself: refused before anything starts, stopped at run time.

A host's file may hold an entry that runs ``mcpmount serve FILE`` on that same FILE
(``mcpmount install`` given the host's own file, or an entry written by hand): started,
each serve would start the next, without end. `self_serving` finds such a server among a
config's before anything starts. What it cannot see (a wrapper script, ``sh -c``) is
stopped at run time: the mcpmount command line passes the files it mounts to its stdio
servers in ``MCPMOUNT_SERVING`` (`serving_environment`), and one started on a file already
in that chain, or under too many others, refuses at once (`enter_chain`). So a loop ends at
the first nested mcpmount, which starts nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path

from mcpmount.errors import ConfigError

__all__ = ["MAX_DEPTH", "SERVING", "enter_chain", "self_serving", "serving_environment"]

SERVING = "MCPMOUNT_SERVING"
"""The config files the mcpmounts above this one mount, outermost first, joined by
``os.pathsep``; each passes the chain, with its own file, to the servers it starts."""

MAX_DEPTH = 8
"""How many mcpmounts may run one inside another, on different files: deeper is a loop
through files that name each other, or a mistake."""


def serving_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the chain to pass on to a server's process: empty outside the command line.

    Stdio servers get only a minimal environment; this one variable is passed beside it,
    so that an mcpmount a server starts knows which files it must not mount again.
    """
    environ = os.environ if environ is None else environ
    chain = environ.get(SERVING)
    return {SERVING: chain} if chain else {}


def enter_chain(files: Sequence[Path], environ: MutableMapping[str, str]) -> None:
    """Refuse to mount ``files`` under an mcpmount that mounts one of them; else add them
    to the chain in ``environ``, which the servers started from here inherit.

    Raises:
        ConfigError: Naming the file, if it is already in the chain (a loop), or if the
            chain is `MAX_DEPTH` long.
    """
    chain = [Path(part) for part in environ.get(SERVING, "").split(os.pathsep) if part]
    mine = [file.resolve() for file in files]  # a link to a file is that file
    depth = len(chain)
    for file in mine:
        if file in chain:
            raise ConfigError(
                str(file),
                [
                    f"refused: this mcpmount was started (depth {depth}) by the mcpmount "
                    f"that mounts {file}, so a server in that file starts mcpmount on the "
                    "file itself, a loop that would never end: remove that server from "
                    "the file, or point it at another config"
                ],
            )
    if depth >= MAX_DEPTH:
        raise ConfigError(
            str(mine[0]) if mine else "<chain>",
            [
                f"refused: {depth} mcpmounts already run one inside another "
                f"({' > '.join(map(str, chain))}): files that start mcpmount on each "
                "other loop; start mcpmount on one of them only"
            ],
        )
    if mine:
        environ[SERVING] = os.pathsep.join(str(file) for file in [*chain, *mine])


def mounted_files(command: str, args: Sequence[str], cwd: Path) -> list[Path]:
    """Return the files ``command args``, run in ``cwd``, would have mcpmount mount.

    It runs mcpmount when the program is ``mcpmount`` (by any path), or when ``mcpmount``
    is one of its arguments (``python -m mcpmount``, ``uvx mcpmount``, ``pipx run
    mcpmount``); every argument after that which is not an option names a file.
    """
    name = Path(command).name.lower().removesuffix(".exe")
    if name == "mcpmount":
        rest = list(args)
    elif "mcpmount" in args:
        rest = list(args[list(args).index("mcpmount") + 1 :])
    else:
        return []
    return [(cwd / arg).absolute() for arg in rest if arg and not arg.startswith("-")]


def self_serving(
    servers: Iterable[tuple[str, str, Sequence[str], Path]], files: Iterable[Path]
) -> list[str]:
    """Return a problem line for each server that would start mcpmount on one of ``files``.

    Args:
        servers: Each stdio server's name, command, arguments and working directory.
        files: The files that hold the servers (the config; a host's file).
    """
    wanted = {Path(file).resolve() for file in files}
    return [
        f"servers.{name}: starts mcpmount on {file}, the file that holds it: each "
        "mcpmount would start the next, without end; remove it, or point it at another config"
        for name, command, args, cwd in servers
        for file in mounted_files(command, args, cwd)
        if file.resolve() in wanted
    ]
