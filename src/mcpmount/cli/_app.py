"""Parse the command line, set up logging, run one command and map errors to exit codes.

Exit codes: 0 ok, 1 a server or call failed, 2 bad config or usage (see `mcpmount.cli._exit`).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from collections.abc import Sequence
from functools import partial
from importlib.metadata import version

import anyio
from rich.console import Console

from mcpmount.cli._audit import FAIL_ON_DEFAULT, run_audit, severity_arg
from mcpmount.cli._content import run_prompt, run_prompts, run_read, run_resources
from mcpmount.cli._describe import run_describe
from mcpmount.cli._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from mcpmount.cli._hosts import HOSTS, add_install, load_for, run_install
from mcpmount.cli._login import run_login, run_logout
from mcpmount.cli._mount import run_check, run_lock, run_status
from mcpmount.cli._query import run_call, run_search, run_tools
from mcpmount.cli._serve import add_serve_auth_flags, run_serve
from mcpmount.cli._shown import ShownLogHandler, shown
from mcpmount.cli._signals import until_signalled
from mcpmount.errors import ArgumentsError, ConfigError, RegistryError

__all__ = ["main"]

DEFAULT_CONFIG = "mcpmount.toml"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by ``python -m mcpmount``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in ("call", "prompt") and args.config is None and _a_path(args.arguments):
        args.config, args.arguments = args.arguments, "{}"  # `call NAME CONFIG`: no arguments
    if getattr(args, "from_host", None) and args.config is not None:
        parser.error("check: give a config file or --from HOST, not both")
    _configure_logging(args.verbose)
    # Piped output keeps whole rows (a terminal's width is unknown there); --json is for scripts.
    out = Console() if sys.stdout.isatty() else Console(width=200)
    err = Console(stderr=True)
    try:
        if args.command == "install":  # writes a host's file; mounts nothing
            return run_install(args, out, err)
        config = load_for(args, DEFAULT_CONFIG, err)
    except OSError as exc:  # install cannot write the host's file
        err.print(shown(f"{args.command}: {exc}", "red", lines=True))
        return EXIT_FAILED
    except ConfigError as exc:
        err.print(shown(str(exc), "red", lines=True))
        return EXIT_USAGE
    try:
        match args.command:
            case "serve":  # serve stops on SIGINT and SIGTERM, and reloads on SIGHUP, by itself
                return anyio.run(run_serve, config, args, err)
            case "check":
                refresh = args.refresh_cache
                command = partial(run_check, config, args.json, out, err, refresh=refresh)
            case "tools":
                command = partial(run_tools, config, args, out, err)
            case "search":
                command = partial(run_search, config, args, out, err)
            case "call":
                command = partial(run_call, config, args, out, err)
            case "describe":
                command = partial(run_describe, config, args, out, err)
            case "prompts":
                command = partial(run_prompts, config, args, out, err)
            case "resources":
                command = partial(run_resources, config, args, out, err)
            case "read":
                command = partial(run_read, config, args, out, err)
            case "prompt":
                command = partial(run_prompt, config, args, out, err)
            case "status":
                command = partial(run_status, config, args, out, err)
            case "lock":
                command = partial(run_lock, config, out, err)
            case "audit":
                command = partial(run_audit, config, args, out, err)
            case "login":
                command = partial(run_login, config, args, out, err)
            case "logout":
                command = partial(run_logout, config, args, out, err)
            case _:  # pragma: no cover - argparse rejects unknown commands
                parser.error(f"unknown command {args.command!r}")
        return anyio.run(until_signalled, command)
    except ConfigError as exc:  # e.g. an unreadable lock file
        err.print(shown(str(exc), "red", lines=True))
        return EXIT_USAGE
    except ArgumentsError as exc:  # arguments JSON cannot carry: the caller's mistake
        err.print(shown(str(exc), "red", lines=True))
        return EXIT_USAGE
    except RegistryError as exc:  # MountError included: one line per failed server
        err.print(shown(str(exc), "red", lines=True))
        return EXIT_FAILED
    except OSError as exc:  # e.g. serve cannot bind its address, lock cannot write its file
        err.print(shown(f"{args.command}: {exc}", "red", lines=True))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _a_path(text: str) -> bool:
    """Whether ``call NAME TEXT``'s TEXT is a config file rather than arguments: a file
    that exists, or text that is not JSON (any JSON is taken as arguments, so that
    ``'["UTC"]'`` is told to be an object, not looked for as a file)."""
    if os.path.exists(text):
        return True
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse turns the ValueError into exit 2)."""
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpmount", description="Mount many MCP servers as one namespaced tool registry."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("--version", action="version", version=f"mcpmount {version('mcpmount')}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument("--json", action="store_true", help="print JSON for scripts")
        return sub

    def config_arg(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "config",
            nargs="?",
            help=f"config file (TOML or mcpServers JSON; default {DEFAULT_CONFIG})",
        )

    def live_arg(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--live",
            action="store_true",
            help="start every server and list what it offers now (default: a server whose "
            "manifest is cached and fresh is listed from it, without starting)",
        )

    check = command("check", "mount every server, show how each did, close them all")
    config_arg(check)
    check.add_argument(
        "--from",
        dest="from_host",
        choices=HOSTS,
        help="check the servers this host would start, from its own config files",
    )
    check.add_argument(
        "--refresh-cache",
        action="store_true",
        help="write every server's live lists to the manifest cache (start = background/lazy)",
    )
    status = command("status", "mount every server and show its state, pid, restarts, latency")
    config_arg(status)
    status.add_argument(
        "--watch",
        type=_seconds,
        metavar="SECONDS",
        help="keep the servers up; refresh every SECONDS",
    )
    config_arg(
        command("lock", "pin every mounted tool's definition in a lock file beside the config")
    )
    audit = command(
        "audit",
        "mount every server and report, offline, what it tells the model and how the config "
        "treats it: hidden characters, text naming other servers' tools, instruction-like "
        "phrasing, destructive tools without a gate, secrets in args, missing pins",
    )
    config_arg(audit)
    audit.add_argument(
        "--fail-on",
        type=severity_arg,
        default=FAIL_ON_DEFAULT,
        metavar="SEVERITY",
        help="exit 1 on a finding at or above this severity: info, low, medium or high "
        f"(default {FAIL_ON_DEFAULT})",
    )
    tools = command("tools", "list the mounted tools under their public names")
    config_arg(tools)
    live_arg(tools)
    search = command("search", "rank the mounted tools (deferred ones included) for a query")
    search.add_argument("query", help='keywords, "select:a,b" or "+required words"')
    config_arg(search)
    search.add_argument("-n", "--limit", type=int, default=5, help="how many results (1-20)")
    live_arg(search)
    call = command("call", "call one tool and print its result (only its server is started)")
    call.add_argument("name", help="the public tool name, e.g. fs__read_file")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    config_arg(call)
    call.add_argument("--timeout", type=_seconds, help="seconds to wait for the result")
    describe = command("describe", "show one tool: its description and a table of its arguments")
    describe.add_argument("name", help="the public tool name, e.g. fs__read_file")
    config_arg(describe)
    live_arg(describe)
    prompts = command("prompts", "list the mounted prompts under their public names")
    config_arg(prompts)
    live_arg(prompts)
    resources = command("resources", "list the mounted resources and templates (registry URIs)")
    config_arg(resources)
    live_arg(resources)
    read = command("read", "read one resource and print its contents")
    read.add_argument("uri", help="a registry URI, e.g. mcpmount://fs/file:///a.txt")
    config_arg(read)
    read.add_argument("--timeout", type=_seconds, help="seconds to wait for the contents")
    prompt = command("prompt", "get one prompt and print its messages")
    prompt.add_argument("name", help="the public prompt name, e.g. fs__summarize")
    prompt.add_argument("arguments", nargs="?", default="{}", help="a JSON object of strings")
    config_arg(prompt)
    prompt.add_argument("--timeout", type=_seconds, help="seconds to wait for the prompt")
    login = command("login", "log in to a url server with OAuth and keep the tokens for this user")
    login.add_argument("namespace", help="the server's namespace (its key in the config)")
    config_arg(login)
    login.add_argument(
        "--no-browser", action="store_true", help="print the URL to open; do not open a browser"
    )
    logout = command("logout", "forget the OAuth login kept for a url server")
    logout.add_argument("namespace", help="the server's namespace (its key in the config)")
    config_arg(logout)
    serve = commands.add_parser(
        "serve",
        help="serve every mounted tool as one MCP server (stdio or streamable HTTP)",
        description="Serve every mounted tool as one MCP server. Answers at once, mounts the "
        "servers in the background, tells clients when the tool list changes, reloads the "
        "config on SIGHUP and when its file changes, and closes every server on SIGINT, "
        "SIGTERM or (stdio) stdin EOF.",
    )
    config_arg(serve)
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")
    serve.add_argument("--port", type=int, default=8000, help="HTTP: port (0: the OS picks)")
    serve.add_argument(
        "--stateless", action="store_true", help="HTTP: no sessions (behind a load balancer)"
    )
    serve.add_argument(
        "--json-response",
        action="store_true",
        help="HTTP: answer every request with one JSON body, never a stream, so that a proxy "
        "can replay a call whose replica died (no progress or log messages during a call)",
    )
    serve.add_argument("--portfile", help="HTTP: write the bound port to this file once serving")
    serve.add_argument(
        "--no-watch",
        action="store_true",
        help="do not reload when the config file changes (SIGHUP still reloads)",
    )
    serve.add_argument(
        "--shared-state",
        metavar="URL",
        help="share state with the other replicas of this config through this Redis "
        '(redis://host:6379/0 or unix:///path.sock; pip install "mcpmount[redis]")',
    )
    add_serve_auth_flags(serve)
    add_install(commands)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
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
