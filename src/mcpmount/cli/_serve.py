"""``mcpmount serve``: every mounted tool as one MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse
import os

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK
from mcpmount.config import RegistryConfig, ServeOAuth, ServeToken
from mcpmount.errors import ConfigError

__all__ = ["run_serve"]


async def run_serve(config: RegistryConfig, args: argparse.Namespace, err: Console) -> int:
    from mcpmount.serve import serve, write_portfile  # uvicorn only when serving

    def ready(url: str) -> None:
        err.print(Text(f"mcpmount: serving MCP at {url}"))
        if args.portfile:
            write_portfile(args.portfile, url)

    def metrics_ready(url: str) -> None:
        err.print(Text(f"mcpmount: serving metrics at {url}"))
        if args.metrics_portfile:
            write_portfile(args.metrics_portfile, url)

    await serve(
        config,
        transport=args.transport,
        host=args.host,
        port=args.port,
        stateless=args.stateless,
        json_response=args.json_response,
        on_ready=ready,
        watch=not args.no_watch,
        shared_state=args.shared_state,
        tokens=_env_tokens(args.token_env),
        tokens_file=args.tokens_file,
        oauth=_oauth(args),
        allowed_hosts=args.allowed_host,
        allow_unauthenticated=args.allow_unauthenticated,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        metrics_token=_env_value("--metrics-token-env", args.metrics_token_env),
        on_metrics_ready=metrics_ready,
    )
    return EXIT_OK


def _env_tokens(names: list[str]) -> dict[str, ServeToken]:
    """The tokens of ``--token-env`` variables, each named after its variable."""
    tokens: dict[str, ServeToken] = {}
    problems: list[str] = []
    for name in names:
        value = os.environ.get(name)
        if not value:
            problems.append(f"--token-env {name}: the variable is not set")
            continue
        try:
            tokens[name] = ServeToken.model_validate({"token": value})
        except ValidationError:
            problems.append(f"--token-env {name}: the token is too short (16 characters or more)")
    if problems:
        raise ConfigError("serve", problems)
    return tokens


def _env_value(flag: str, name: str | None) -> str | None:
    """The value of the environment variable ``flag`` names; None without the flag.

    Raises:
        ConfigError: The variable is not set.
    """
    if name is None:
        return None
    value = os.environ.get(name)
    if not value:
        raise ConfigError("serve", [f"{flag} {name}: the variable is not set"])
    return value


def _oauth(args: argparse.Namespace) -> ServeOAuth | None:
    """The ``--oauth-*`` flags as one setting; None when none is given."""
    given = {
        "issuer": args.oauth_issuer,
        "jwks_url": args.oauth_jwks_url,
        "resource": args.oauth_resource,
    }
    if not any(given.values()) and not args.oauth_scope:
        return None
    missing = [f"--oauth-{key.replace('_', '-')}" for key, value in given.items() if not value]
    if missing:
        raise ConfigError("serve", [f"OAuth also needs {', '.join(missing)}"])
    try:
        return ServeOAuth.model_validate({**given, "scopes": args.oauth_scope})
    except ValidationError:
        raise ConfigError("serve", ["--oauth-* values must not be blank"]) from None
