"""``login`` and ``logout``: keep or forget a url server's OAuth login for this user."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

from mcpmount.auth import LoginFailed, TokenStore, login, logout
from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from mcpmount.cli._shown import shown
from mcpmount.config import HttpServer, RegistryConfig

__all__ = ["run_login", "run_logout"]


def _server(config: RegistryConfig, namespace: str, err: Console) -> HttpServer | None:
    spec = config.servers.get(namespace)
    where = config.path or "the config"
    if spec is None:
        known = ", ".join(config.servers) or "none"
        err.print(Text(f"no server {namespace!r} in {where} (servers: {known})", style="red"))
        return None
    if not isinstance(spec, HttpServer):
        err.print(
            Text(f"server {namespace!r} runs a command; OAuth is for url servers", style="red")
        )
        return None
    return spec


async def run_login(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    spec = _server(config, args.namespace, err)
    if spec is None:
        return EXIT_USAGE
    store = TokenStore.of(config.settings)

    def show(line: str) -> None:
        err.print(shown(line), soft_wrap=True)  # a URL must stay whole to be copied

    try:
        await login(spec, args.namespace, store, show=show, open_browser=not args.no_browser)
    except LoginFailed as exc:  # it may quote the authorization server's words
        err.print(shown(str(exc), "red", lines=True))
        return EXIT_FAILED
    out.print(Text(f"Logged in to {args.namespace} ({spec.display_url()})."))
    return EXIT_OK


async def run_logout(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    spec = _server(config, args.namespace, err)
    if spec is None:
        return EXIT_USAGE
    forgot = logout(spec, TokenStore.of(config.settings))
    said = "Forgot the login of" if forgot else "No login was kept for"
    out.print(Text(f"{said} {args.namespace} ({spec.display_url()})."))
    return EXIT_OK
