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

__all__ = ["add_serve_auth_flags", "run_serve"]


def add_serve_auth_flags(serve: argparse.ArgumentParser) -> None:
    """The flags of who may use HTTP ``serve`` and read its metrics (each joins or replaces
    the ``[serve]`` table)."""
    serve.add_argument(
        "--token-env",
        action="append",
        default=[],
        metavar="VAR",
        help="HTTP: accept the bearer token in this environment variable (repeatable)",
    )
    serve.add_argument(
        "--tokens-file", metavar="PATH", help="HTTP: bearer tokens, one a line: TOKEN [ns1,ns2]"
    )
    serve.add_argument("--oauth-issuer", metavar="URL", help="HTTP: accept this issuer's JWTs")
    serve.add_argument("--oauth-jwks-url", metavar="URL", help="HTTP: the issuer's signing keys")
    serve.add_argument(
        "--oauth-resource", metavar="URL", help="HTTP: this server's public URL (the audience)"
    )
    serve.add_argument(
        "--oauth-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="HTTP: a scope every JWT must hold (repeatable)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="HTTP: a Host clients may use besides loopback ones (repeatable)",
    )
    serve.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="HTTP: serve beyond loopback without any authentication",
    )
    serve.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="HTTP: serve /metrics on a listener of its own at this port (0: the OS picks), "
        "and not on the MCP port",
    )
    serve.add_argument(
        "--metrics-host", metavar="HOST", help="HTTP: the metrics listener's address (127.0.0.1)"
    )
    serve.add_argument(
        "--metrics-portfile", help="HTTP: write the metrics listener's port to this file"
    )
    serve.add_argument(
        "--metrics-token-env",
        metavar="VAR",
        help="HTTP: /metrics answers only the bearer token in this environment variable",
    )


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
