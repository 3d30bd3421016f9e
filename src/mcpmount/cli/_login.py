"""``login`` and ``logout``: keep or forget a url server's OAuth login for this user."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.text import Text

from mcpmount.auth import LoginFailed, TokenStore, login, logout
from mcpmount.cli._exit import EXIT_OK, Failure, UsageError
from mcpmount.cli._shown import print_json, shown
from mcpmount.config import HttpServer, RegistryConfig

__all__ = ["run_login", "run_logout"]


def _server(config: RegistryConfig, namespace: str) -> HttpServer:
    """The url server ``namespace`` names.

    Raises:
        UsageError: The config has no such server, or it runs a command.
    """
    spec = config.servers.get(namespace)
    where = config.path or "the config"
    if spec is None:
        known = ", ".join(config.servers) or "none"
        raise UsageError(f"no server {namespace!r} in {where}", hint=f"its servers: {known}")
    if not isinstance(spec, HttpServer):
        said = f"server {namespace!r} runs a command; OAuth is for url servers"
        raise UsageError(said, hint="a command's server needs no login")
    return spec


async def run_login(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    spec = _server(config, args.namespace)
    store = TokenStore.of(config.settings)

    def show(line: str) -> None:
        err.print(shown(line), soft_wrap=True)  # a URL must stay whole to be copied

    try:
        await login(spec, args.namespace, store, show=show, open_browser=not args.no_browser)
    except LoginFailed as exc:  # it may quote the authorization server's words
        failure = Failure("login_failed", str(exc), server=args.namespace)
        if args.json:
            return failure.tell(as_json=True)
        err.print(shown(failure.message, "red", lines=True))
        return failure.exit_code
    _done(out, args, "logged_in", f"Logged in to {args.namespace} ({spec.display_url()}).")
    return EXIT_OK


def _done(out: Console, args: argparse.Namespace, what: str, said: str) -> None:
    """Say what was done: ``said``, or under ``--json`` ``{"server", what: true}``."""
    if args.json:
        print_json(out, json.dumps({"server": args.namespace, what: True}))
    else:
        out.print(Text(said))


async def run_logout(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    spec = _server(config, args.namespace)
    forgot = logout(spec, TokenStore.of(config.settings))
    said = "Forgot the login of" if forgot else "No login was kept for"
    if args.json:
        print_json(out, json.dumps({"server": args.namespace, "forgot": forgot}))
    else:
        out.print(Text(f"{said} {args.namespace} ({spec.display_url()})."))
    return EXIT_OK
