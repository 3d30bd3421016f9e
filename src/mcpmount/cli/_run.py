"""Run one parsed command: set up logging and the consoles, load the config, dispatch,
and map errors to exit codes.

Exit codes: 0 ok, 1 a server or call failed, 2 bad config or usage (see `mcpmount.cli._exit`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final

import anyio
from rich.console import Console

from mcpmount.cli._audit import run_audit
from mcpmount.cli._exit import UsageError
from mcpmount.cli._failure import failure_of
from mcpmount.cli._hosts import HOST_FILE_COMMANDS, load_for, run_as_host
from mcpmount.cli._log import run_log
from mcpmount.cli._login import run_login, run_logout
from mcpmount.cli._parser import DEFAULT_CONFIG
from mcpmount.cli._serve import JsonLogHandler, run_serve
from mcpmount.cli._shown import ShownLogHandler, shown
from mcpmount.cli._signals import until_signalled
from mcpmount.cli.mounting import (
    run_call,
    run_check,
    run_describe,
    run_lock,
    run_prompt,
    run_prompts,
    run_read,
    run_resources,
    run_search,
    run_status,
    run_tools,
)
from mcpmount.config import RegistryConfig
from mcpmount.errors import ConfigError, RegistryError

__all__ = ["run"]

_Command = Callable[[RegistryConfig, argparse.Namespace, Console, Console], Awaitable[int]]

_COMMANDS: dict[str, _Command] = {
    "tools": run_tools,
    "search": run_search,
    "call": run_call,
    "describe": run_describe,
    "prompts": run_prompts,
    "resources": run_resources,
    "read": run_read,
    "prompt": run_prompt,
    "status": run_status,
    "audit": run_audit,
    "login": run_login,
    "logout": run_logout,
}
"""The commands run as ``command(config, args, out, err)``; ``serve``, ``check`` and
``lock`` take their own arguments."""

_SERVE_LOOP: Final[dict[str, object]] = {"use_uvloop": sys.platform != "win32"}
"""``serve`` runs on uvloop (libuv's event loop) where it is built: a served call is an SDK
server's request and an SDK client's in one process, and about a fifth of its CPU is the
event loop's own. The other commands are short and keep asyncio's loop."""


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the command ``args`` name; returns the exit code."""
    _configure_logging(args.verbose, json_lines=args.command == "serve" and args.json)
    # Piped output keeps whole rows (a terminal's width is unknown there); --json is for scripts.
    out = Console() if sys.stdout.isatty() else Console(width=200)
    err = Console(stderr=True)
    try:
        if args.command in HOST_FILE_COMMANDS:  # write a host's file; mount nothing
            return HOST_FILE_COMMANDS[args.command](args, out, err)
        if args.command == "check" and args.as_host:  # starts the host's entry, no config
            return anyio.run(run_as_host, args, out, err)
        if args.command == "log":  # reads a file; mounts nothing
            return run_log(args, out, err)
        config = load_for(args, DEFAULT_CONFIG, err)
    except (OSError, ConfigError, UsageError, KeyboardInterrupt) as exc:  # install: a host's file
        return _tell(exc, args, err)
    try:
        match args.command:
            case "serve":  # serve stops on SIGINT and SIGTERM, and reloads on SIGHUP, by itself
                return anyio.run(run_serve, config, args, err, backend_options=_SERVE_LOOP)
            case "check":
                refresh = args.refresh_cache
                command = partial(run_check, config, args.json, out, err, refresh=refresh)
            case "lock":
                command = partial(run_lock, config, out, err)
            case name if name in _COMMANDS:
                command = partial(_COMMANDS[name], config, args, out, err)
            case _:  # pragma: no cover - argparse rejects unknown commands
                parser.error(f"unknown command {args.command!r}")
        return anyio.run(until_signalled, command)
    except (RegistryError, OSError, UsageError, KeyboardInterrupt) as exc:  # bind, lock file...
        return _tell(exc, args, err)


def _tell(exc: BaseException, args: argparse.Namespace, err: Console) -> int:
    """Tell why the command failed and return its exit code: under ``--json`` as one JSON
    object on stdout (``serve``'s on stderr: its stdout may be the MCP stream), else on
    stderr as text (a server's words in it made visible)."""
    failure = failure_of(exc, args.command)
    if getattr(args, "json", False):
        return failure.tell(as_json=True, stream=sys.stderr if args.command == "serve" else None)
    said = failure.message
    if isinstance(exc, UsageError) and exc.hint:  # an error's own message holds its hint
        said += f", {exc.hint}"
    if not isinstance(exc, KeyboardInterrupt):
        err.print(shown(said, "red", lines=True))
    return failure.exit_code


def _configure_logging(verbosity: int, *, json_lines: bool = False) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler: logging.Handler = JsonLogHandler()
    if not json_lines:
        handler = ShownLogHandler(console=Console(stderr=True), show_path=False, markup=False)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    if verbosity < 2:
        # The SDK logs every unparseable server line with a traceback; we report it ourselves.
        logging.getLogger("mcp").setLevel(logging.ERROR)
    # These log whole URLs (userinfo, query tokens, a secret in the path) and session ids:
    # secrets, never shown at any verbosity. The SDK's HTTP client warns with redirect
    # targets too; our own errors say the same with the secrets hidden.
    for name in ("httpx2", "httpcore2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)
    if verbosity < 2:
        # The SDK's OAuth logs its failures with tracebacks; ours say what to do.
        logging.getLogger("mcp.client.auth").setLevel(logging.CRITICAL)
