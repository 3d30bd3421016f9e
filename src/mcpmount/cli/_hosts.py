"""The command line and MCP hosts: ``check --from HOST``, ``install HOST CONFIG``, and
asking a host file's ``${input:id}`` on the terminal.
"""

from __future__ import annotations

import argparse
import getpass
import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK
from mcpmount.cli._shown import shown, visible
from mcpmount.config import Asker, HostInput, RegistryConfig, load_config
from mcpmount.hosts import Host, load_host, plan_install

__all__ = ["load_for", "mcpmount_command", "run_install", "terminal_asker"]


def terminal_asker(wanted: HostInput) -> str | None:
    """Ask for one ``${input:id}`` on the terminal: its description on stderr, a password
    without echo. An empty answer takes the input's default; None at end of input."""
    # The description comes from a file that may not be the user's own (a cloned repo's).
    prompt = visible(f"{wanted.description} (${{input:{wanted.id}}})")
    if wanted.options:
        prompt += " [" + visible(" / ".join(wanted.options)) + "]"
    if wanted.default is not None and not wanted.password:
        prompt += f" (default {visible(wanted.default)})"
    try:
        if wanted.password:
            answer = getpass.getpass(prompt + ": ", stream=sys.stderr)
        else:
            sys.stderr.write(prompt + ": ")
            sys.stderr.flush()
            typed = sys.stdin.readline()
            if not typed:
                return None
            answer = typed.rstrip("\r\n")
    except EOFError:
        return None
    return wanted.default if not answer and wanted.default is not None else answer


def load_for(args: argparse.Namespace, default: str, err: Console) -> RegistryConfig:
    """Load the config a command names: its file, or (``check --from HOST``) the host's.

    ``${input:id}`` is asked on the terminal, when stdin is one, by every command but
    ``serve``: a server it runs for a host has nobody to ask, nor has a reload.
    """
    ask: Asker | None = None
    if args.command != "serve" and sys.stdin.isatty():
        ask = terminal_asker
    host = getattr(args, "from_host", None)
    if host is None:
        return load_config(args.config or default, ask=ask)
    loaded = load_host(Host(host), ask=ask)
    read = ", ".join(str(file) for file in loaded.read) or "no file declares servers"
    err.print(Text(f"{loaded.host.label}: {read}", style="dim"))
    return loaded.config


def mcpmount_command() -> list[str]:
    """Return the command that runs this mcpmount: the ``mcpmount`` script of its
    environment (beside its Python), else that Python with ``-m mcpmount``."""
    folder = Path(sys.executable).parent
    script = shutil.which("mcpmount", path=str(folder))
    return [str(Path(script).absolute())] if script else [sys.executable, "-m", "mcpmount"]


def run_install(args: argparse.Namespace, out: Console, err: Console) -> int:
    host = Host(args.host)
    plan = plan_install(
        host,
        args.config,
        command=mcpmount_command(),
        name=args.name,
        project=args.project,
        copy_env=args.copy_env,
    )
    path = plan.file.path
    if args.dry_run:
        out.print(Text(plan.diff() or f"{path}: already up to date; nothing to change\n"), end="")
    elif not plan.changed:
        err.print(Text(f"{path}: {args.name!r} is already installed; nothing changed"))
    else:
        backup = plan.write()
        kept = f" (the old file is kept as {backup})" if backup else ""
        err.print(Text(f"{path}: installed {args.name!r}{kept}", style="green"))
    for note in plan.notes:
        err.print(shown(note, "yellow", lines=True))
    if not args.dry_run and plan.changed:
        err.print(Text(f"restart {host.label}, or reload its MCP servers, to start it"))
    return EXIT_OK
