"""The command line's parser: every command, argument and flag, and nothing else.

It imports nothing but the standard library, so that ``--help``, ``--version`` and a
usage error never load the SDK, pydantic or rich: the commands themselves are imported
only once the arguments are parsed (``_run``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from mcpmount.cli._exit import UsageError
from mcpmount.cli._log_args import add_log
from mcpmount.cli._serve_args import add_serve

__all__ = ["DEFAULT_CONFIG", "HOSTS", "a_path", "build_parser", "wants_json"]

DEFAULT_CONFIG = "mcpmount.toml"

HOSTS = [
    "claude-desktop",
    "claude-code",
    "cursor",
    "vscode",
    "windsurf",
    "zed",
    "codex",
    "gemini",
    "goose",
    "continue",
    "lm-studio",
]
"""The hosts ``--from``, ``--as-host``, ``install``, ``adopt`` and ``uninstall`` take, by
name (`mcpmount.hosts.HostApp`'s values)."""

FAIL_ON_DEFAULT = "high"


def _severity(text: str) -> object:
    """``--fail-on``'s value: a severity by name (argparse turns the error into exit 2)."""
    from mcpmount.cli._audit import severity_arg  # the audit rules load only for audit

    return severity_arg(text)


def a_path(text: str) -> bool:
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


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked (reading package
    metadata costs more than the rest of ``--help``)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        from importlib.metadata import version

        sys.stdout.write(f"mcpmount {version('mcpmount')}\n")  # stdout, as argparse's own
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are raised as `UsageError`, not printed: ``main`` tells
    them as text or, under ``--json``, as one JSON object (its subparsers are of this class
    too)."""

    def error(self, message: str) -> NoReturn:
        hint = f"see `{self.prog} --help`"
        raise UsageError(f"{self.prog}: error: {message}", hint=hint, usage=self.format_usage())


def wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for ``--json`` (before any ``--``): known even when
    the rest of it does not parse."""
    words = list(argv)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every command (the CLI reference is written from it)."""
    parser = _Parser(
        prog="mcpmount", description="Mount many MCP servers as one namespaced tool registry."
    )
    parser = cast(argparse.ArgumentParser, parser)  # its subparsers' type, as argparse's
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
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
            "lists are cached and fresh is listed from them, without starting)",
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
        "--as-host",
        choices=HOSTS,
        help="start the entry `install` put in this host's file as the host does (a bare "
        "environment, in /) and report each server",
    )
    check.add_argument(
        "--name",
        default="mcpmount",
        help="with --as-host: the entry's name (default mcpmount)",
    )
    check.add_argument(
        "--refresh-cache",
        action="store_true",
        help="write every server's live lists to the cache (start = background/lazy)",
    )
    status = command(
        "status",
        "show each server's state, pid, restarts, calls and latency: those of a running "
        "serve of the config, or else mount every server here",
    )
    config_arg(status)
    status.add_argument(
        "--local",
        action="store_true",
        help="mount every server here even while a serve of the config runs",
    )
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
        type=_severity,
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
    add_log(command("log", "show serve's call log: the last records, filtered; then new ones"))
    add_serve(commands.add_parser, config_arg)
    _add_install(commands)
    completion = commands.add_parser(
        "completion",
        help="print a shell completion script: bash, zsh or fish",
        description="Print the completion script of a shell, for its startup file: "
        'bash: eval "$(mcpmount completion bash)" in ~/.bashrc; zsh: the same in ~/.zshrc; '
        "fish: mcpmount completion fish > ~/.config/fish/completions/mcpmount.fish",
    )
    completion.add_argument("shell", choices=["bash", "zsh", "fish"])
    completion.add_argument(
        "--json", action="store_true", help='print {"shell": ..., "script": ...} for scripts'
    )
    return parser


def _add_install(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add the ``install`` command to the parser's ``commands``."""
    install = commands.add_parser(
        "install",
        help="put `mcpmount serve CONFIG` into a host's config file",
        description="Put `mcpmount serve CONFIG` into a host's config file (the user's; "
        "--project: the current directory's), in the host's own format and shape. Only that "
        "entry changes: every other server, key and comment of the file stays as it was; an "
        "entry of the same name is updated in place; the old file is kept as "
        "FILE.bak-<time>, and `mcpmount uninstall HOST` puts it back. Running it again "
        "changes nothing.",
    )
    install.add_argument("host", choices=HOSTS, help="the host to install into")
    install.add_argument("--json", action="store_true", help="print JSON for scripts")
    install.add_argument("config", help="the config to serve (TOML or a host's JSON)")
    install.add_argument("--name", default="mcpmount", help="the entry's name (default mcpmount)")
    install.add_argument(
        "--project", action="store_true", help="write the project's file, not the user's"
    )
    install.add_argument(
        "--copy-env",
        action="store_true",
        help="copy this shell's values of the variables the config needs into the file",
    )
    install.add_argument(
        "--dry-run", action="store_true", help="print the change as a diff; write nothing"
    )
    install.add_argument(
        "--print",
        action="store_true",
        help="print the entry to paste into the host's file; write nothing",
    )
    _add_adopt(commands)


def _add_adopt(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Add ``adopt`` and ``uninstall`` to the parser's ``commands``."""
    adopt = commands.add_parser(
        "adopt",
        help="move a host's servers into an mcpmount config, served by one entry",
        description="Move the servers of a host's config file into a new mcpmount config "
        "and put one `mcpmount serve CONFIG` entry in their place. Values (env, headers) "
        "become ${VAR}s the entry's env gives, as the file wrote them: none is printed nor "
        "written into the config. The old file is kept; `mcpmount uninstall HOST` puts it "
        "back.",
    )
    adopt.add_argument("host", choices=HOSTS, help="the host whose servers to adopt")
    adopt.add_argument(
        "config",
        nargs="?",
        help="the config to write (default: HOST.toml in mcpmount's config folder)",
    )
    uninstall = commands.add_parser(
        "uninstall",
        help="put a host's file back as it was before install or adopt",
        description="Put the host's config file back, byte for byte, as it was before "
        "mcpmount first changed it, if it has not changed since; else take out only "
        "mcpmount's entry, and say so.",
    )
    uninstall.add_argument("host", choices=HOSTS, help="the host whose file to put back")
    for command in (adopt, uninstall):
        command.add_argument(
            "--name", default="mcpmount", help="the entry's name (default mcpmount)"
        )
        command.add_argument(
            "--project", action="store_true", help="the project's file, not the user's"
        )
        command.add_argument("--json", action="store_true", help="print JSON for scripts")
    adopt.add_argument("--dry-run", action="store_true", help="say what would move; write nothing")
