"""``mcpmount serve``: every mounted tool as one MCP server (stdio or streamable HTTP).

Its own lines go to stderr (stdout is the MCP stream under stdio): as text, or with
``--json`` each as one JSON object on a line of its own: ``{"event": "serving", "url":
...}``, ``{"event": "note", "message": ...}``, a log record ``{"event": "log", "level":
..., "logger": ..., "message": ...}`` and, if it fails, the failure (``code``,
``message``, ``server``, ``hint``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Final

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK
from mcpmount.config import RegistryConfig, ServeOAuth, ServeToken
from mcpmount.errors import ConfigError

__all__ = ["ON_A_TERMINAL", "JsonLogHandler", "run_serve", "serve_flags"]

ON_A_TERMINAL: Final = (
    "mcpmount serve: an MCP server on stdin/stdout, for a host (Claude Desktop, Cursor...) "
    "to start, not to type into: `mcpmount install HOST CONFIG` adds it to a host; Ctrl-C stops it"
)
"""The note ``serve`` writes when started on a terminal, where it would otherwise wait
silently for JSON-RPC that nobody types."""


class JsonLogHandler(logging.Handler):
    """Write each log record to stderr as one JSON line (``serve --json``): ASCII only, so
    a server's words in it carry no control code to a terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        line = {
            "event": "log",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        try:
            sys.stderr.write(json.dumps(line) + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stderr must not end serve
            self.handleError(record)


def _say(err: Console, as_json: bool, event: str, text: str, **fields: str) -> None:
    """Write one of serve's own lines to stderr: ``text``, or under ``--json`` the event."""
    if as_json:
        sys.stderr.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stderr.flush()
    else:
        err.print(Text(text), soft_wrap=True)


async def run_serve(config: RegistryConfig, args: argparse.Namespace, err: Console) -> int:
    from mcpmount.serve import serve  # uvicorn only when serving

    config = config.with_serve(**serve_flags(args))
    if config.serve.transport == "stdio" and sys.stdin.isatty():
        _say(err, args.json, "note", ON_A_TERMINAL, message=ON_A_TERMINAL)

    def ready(url: str) -> None:
        _say(err, args.json, "serving", f"mcpmount: serving MCP at {url}", url=url)

    def metrics_ready(url: str) -> None:
        _say(err, args.json, "metrics", f"mcpmount: serving metrics at {url}", url=url)

    await serve(config, on_ready=ready, on_metrics_ready=metrics_ready)
    return EXIT_OK


def serve_flags(args: argparse.Namespace) -> dict[str, object]:
    """The ``[serve]`` settings ``mcpmount serve``'s flags give, by key; a flag not given
    is None, so that the config's key stands (`RegistryConfig.with_serve` merges them).

    Raises:
        ConfigError: A ``--token-env`` or ``--metrics-token-env`` variable is not set or
            too short, or the ``--oauth-*`` flags are incomplete.
    """
    return {
        "transport": args.transport,
        "host": args.host,
        "port": args.port,
        "stateless": args.stateless,
        "json_response": args.json_response,
        "portfile": args.portfile,
        "watch": args.watch,
        "first_list_wait": args.first_list_wait,
        "shared_state": args.shared_state,
        "call_log": args.call_log,
        "tokens": _env_tokens(args.token_env) or None,
        "tokens_file": args.tokens_file,
        "oauth": _oauth(args),
        "allowed_hosts": args.allowed_host or None,
        "allow_unauthenticated": args.allow_unauthenticated,
        "metrics_port": args.metrics_port,
        "metrics_host": args.metrics_host,
        "metrics_portfile": args.metrics_portfile,
        "metrics_token": _env_value("--metrics-token-env", args.metrics_token_env),
    }


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
