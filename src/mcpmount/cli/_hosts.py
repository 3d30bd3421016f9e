"""The command line and MCP hosts: ``check --from HOST``, ``install HOST CONFIG``,
``check --as-host HOST``, and
asking a host file's ``${input:id}`` on the terminal.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK
from mcpmount.cli._shown import shown, visible
from mcpmount.config import HostInput, InputPrompt, RegistryConfig, StdioServer, load_config
from mcpmount.errors import ConfigError
from mcpmount.hosts import (
    BARE_PATH,
    HostApp,
    enter_chain,
    load_host,
    plan_adopt,
    plan_install,
    self_serving,
    start_as_host,
    uninstall,
)

__all__ = [
    "HOST_FILE_COMMANDS",
    "load_for",
    "mcpmount_command",
    "run_adopt",
    "run_as_host",
    "run_install",
    "run_uninstall",
    "terminal_asker",
]


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

    A config with a server that starts mcpmount on the file holding it is refused before
    anything starts; so is a file an mcpmount above this one mounts (a loop that got past
    that: a wrapper script). The files mounted here are then added to ``MCPMOUNT_SERVING``
    of this process's environment, which every stdio server started from here inherits:
    this is the command line's process, so changing its environment is its own business.
    """
    ask: InputPrompt | None = None
    if args.command != "serve" and sys.stdin.isatty():
        ask = terminal_asker
    host = getattr(args, "from_host", None)
    if host is None:
        path = Path(args.config or default)
        enter_chain([path], os.environ)
        config = load_config(path, ask=ask)
        files = [path]
    else:
        loaded = load_host(HostApp(host), ask=ask)
        read = ", ".join(str(file) for file in loaded.read) or "no file declares servers"
        err.print(Text(f"{loaded.host.label}: {read}", style="dim"))
        files = [file.path for file in loaded.read]
        enter_chain(files, os.environ)
        config = loaded.config
    _refuse_self_serving(config, files)
    return config


def _refuse_self_serving(config: RegistryConfig, files: list[Path]) -> None:
    servers = [
        (name, spec.command, spec.args, Path(spec.cwd or "."))
        for name, spec in config.servers.items()
        if isinstance(spec, StdioServer)
    ]
    if problems := self_serving(servers, files):
        raise ConfigError(str(files[0]), [f"refused: {problem}" for problem in problems])


def mcpmount_command() -> list[str]:
    """Return the command that runs this mcpmount: its Python, by absolute path, with
    ``-m mcpmount``.

    Not the ``mcpmount`` script beside it: pip writes the script's first line with the
    venv's path at install time, so a venv that is moved (or copied) keeps a script that
    runs nothing, even once the entry is installed again; the venv's Python (not resolved:
    the link is what makes it the venv's) with ``-m`` works again from its new place as
    soon as ``install`` is run from there.
    """
    return [str(Path(sys.executable).absolute()), "-m", "mcpmount"]


def run_install(args: argparse.Namespace, out: Console, err: Console) -> int:
    host = HostApp(args.host)
    plan = plan_install(
        host,
        args.config,
        command=mcpmount_command(),
        name=args.name,
        project=args.project,
        copy_env=args.copy_env,
    )
    path = plan.file.path
    if getattr(args, "json", False):
        backup = None if args.print or args.dry_run else plan.write()
        answer: dict[str, object] = {
            "host": host.value,
            "file": str(path),
            "entry": args.name,
            "changed": plan.changed,
            "written": plan.changed and not (args.print or args.dry_run),
            "backup": str(backup) if backup else None,
            "notes": list(plan.notes),
        }
        if args.print:
            answer["snippet"] = plan.snippet()
        elif args.dry_run:
            answer["diff"] = plan.diff()
        out.print_json(json.dumps(answer))
        return EXIT_OK
    if args.print:
        out.print(Text(plan.snippet().rstrip("\n")))
        err.print(Text(f"paste it into {path}; nothing was written", style="dim"))
    elif args.dry_run:
        out.print(Text(plan.diff() or f"{path}: already up to date; nothing to change\n"), end="")
    elif not plan.changed:
        err.print(Text(f"{path}: {args.name!r} is already installed; nothing changed"))
    else:
        backup = plan.write()
        kept = f" (the old file is kept as {backup})" if backup else ""
        err.print(Text(f"{path}: installed {args.name!r}{kept}", style="green"))
    for note in plan.notes:
        err.print(shown(note, "yellow", lines=True))
    if not args.dry_run and not args.print and plan.changed:
        err.print(Text(f"restart {host.label}, or reload its MCP servers, to start it"))
    return EXIT_OK


def run_adopt(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``adopt HOST [CONFIG]``: move the host's servers into CONFIG; print no value."""
    host = HostApp(args.host)
    config = Path(args.config) if args.config else _adopted_config(host)
    plan = plan_adopt(
        host, config, command=mcpmount_command(), name=args.name, project=args.project
    )
    path = plan.install.file.path
    moved = ", ".join(plan.moved)
    backup = None if args.dry_run else plan.write()
    if getattr(args, "json", False):  # names only: never a value
        answer = {
            "host": host.value,
            "file": str(path),
            "config": str(plan.config),
            "moved": list(plan.moved),
            "kept": list(plan.kept),
            "variables": list(plan.variables),
            "written": not args.dry_run,
            "backup": str(backup) if backup else None,
        }
        out.print_json(json.dumps(answer))
        return EXIT_OK
    if args.dry_run:
        out.print(Text(f"{path}: would move {moved} into {plan.config}"))
    else:
        kept = f"; the old file is kept as {backup}" if backup else ""
        err.print(Text(f"{path}: moved {moved} into {plan.config}{kept}", style="green"))
    for line in plan.kept:
        err.print(shown(line, "yellow", lines=True))
    if plan.variables:
        err.print(
            Text(
                f"env: {', '.join(plan.variables)} are given to serve by the entry's env, "
                "as the file had them; the config refers to them as ${VAR}"
            )
        )
    if not args.dry_run:
        err.print(Text(f"restart {host.label}; `mcpmount uninstall {host.value}` undoes it"))
    return EXIT_OK


def _adopted_config(host: HostApp) -> Path:
    import platformdirs

    return platformdirs.user_config_path("mcpmount") / f"{host.value}.toml"


def run_uninstall(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``uninstall HOST``: put the host's file back as it was before mcpmount."""
    host = HostApp(args.host)
    done = uninstall(host, name=args.name, project=args.project)
    if getattr(args, "json", False):
        answer = {
            "host": host.value,
            "file": str(done.file),
            "restored_from": str(done.restored) if done.restored else None,
            "entry_removed": done.removed,
            "config": done.config,
            "backup": str(done.backup) if done.backup else None,
        }
        out.print_json(json.dumps(answer))
        return EXIT_OK
    if done.removed:
        kept = f" (the file before this is kept as {done.backup})" if done.backup else ""
        err.print(
            Text(
                f"{done.file}: changed since mcpmount wrote it, so only {args.name!r} was "
                f"taken out{kept}",
                style="yellow",
            )
        )
        if done.config:
            err.print(Text(f"the servers adopted are in {done.config}: copy back what you need"))
    elif done.restored is not None:
        err.print(Text(f"{done.file}: put back as it was ({done.restored})", style="green"))
    else:
        err.print(Text(f"{done.file}: removed; mcpmount had made it", style="green"))
    if done.config and not done.removed:
        err.print(Text(f"{done.config} is left as it is; remove it if you no longer need it"))
    return EXIT_OK


HOST_FILE_COMMANDS = {"install": run_install, "adopt": run_adopt, "uninstall": run_uninstall}
"""The commands that write a host's file and mount nothing."""


async def run_as_host(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``check --as-host HOST``: start the installed entry as the host does, report each
    server; fails (exit 1) if it cannot start, or a server that is not deferred lists
    nothing."""
    host = HostApp(args.as_host)
    found = await start_as_host(host, args.name)
    waiting = [
        server
        for server, tools in found.servers.items()
        if not tools and server not in found.deferred
    ]
    failed = found.error is not None or bool(waiting)
    if args.json:
        rows = [
            {"server": server, "tools": len(tools), "deferred": server in found.deferred}
            for server, tools in found.servers.items()
        ]
        answer = {
            "host": host.value,
            "file": str(found.file.path),
            "entry": args.name,
            "config": str(found.config) if found.config else None,
            "ok": not failed,
            "servers": rows,
            "error": found.error,
            "stderr": found.stderr if failed else "",
        }
        out.print_json(json.dumps(answer))
        return EXIT_FAILED if failed else EXIT_OK
    err.print(
        Text(
            f"{host.label}: {args.name!r} of {found.file.path}, started as the host starts "
            f"it (HOME, PATH={BARE_PATH}, in /)",
            style="dim",
        )
    )
    for server, tools in found.servers.items():
        if tools:
            said = f"{len(tools)} tool{'s' if len(tools) != 1 else ''} listed"
            out.print(Text(f"{server}: ok, {said}", style="green"))
        elif server in found.deferred:
            out.print(Text(f"{server}: deferred, so none listed (found through tool_search)"))
        else:
            out.print(Text(f"{server}: no tools listed: not mounted", style="red"))
    if found.error is not None:
        err.print(shown(f"{args.name}: {found.error}", "red", lines=True))
    if failed and found.stderr:
        err.print(Text("its stderr, last lines:", style="dim"))
        err.print(shown(found.stderr, "dim", lines=True))
    return EXIT_FAILED if failed else EXIT_OK
