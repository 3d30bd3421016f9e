"""The flags of ``mcpmount serve`` (standard library only, as the parser is).

Each flag gives the ``[serve]`` key of its name and overrides the config's (merged once,
`mcpmount.cli._serve.serve_flags`), so every flag defaults to None: not given.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["add_serve"]


def add_serve(
    add_parser: Callable[..., argparse.ArgumentParser],
    config_arg: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add the ``serve`` command with ``add_parser``; ``config_arg`` adds its config."""
    serve = add_parser(
        "serve",
        help="serve every mounted tool as one MCP server (stdio or streamable HTTP)",
        description="Serve every mounted tool as one MCP server. Answers at once, mounts the "
        "servers in the background, tells clients when the tool list changes, reloads the "
        "config on SIGHUP and when its file changes, and closes every server on SIGINT, "
        "SIGTERM or (stdio) stdin EOF. Each flag overrides the config's [serve] key of its name.",
    )
    config_arg(serve)
    serve.add_argument(
        "--json",
        action="store_true",
        help="write serve's own lines on stderr (serving, notes, logs, errors) as JSON lines",
    )
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        help="stdio, or streamable HTTP at /mcp ([serve] transport: stdio)",
    )
    serve.add_argument("--host", help="HTTP: address to bind ([serve] host: 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, help=f"HTTP: port, 0: the OS picks ([serve] port: {8000})"
    )
    serve.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="HTTP: no sessions (behind a load balancer)",
    )
    serve.add_argument(
        "--json-response",
        action="store_true",
        default=None,
        help="HTTP: answer every request with one JSON body, never a stream, so that a proxy "
        "can replay a call whose replica died (no progress or log messages during a call)",
    )
    serve.add_argument("--portfile", help="HTTP: write the bound port to this file once serving")
    serve.add_argument(
        "--first-list-wait",
        type=float,
        metavar="SECONDS",
        help="how long the first lists wait for servers still starting that need not be up "
        "([serve] first_list_wait: 2; the way to set it for a host's file)",
    )
    serve.add_argument(
        "--no-watch",
        dest="watch",
        action="store_false",
        default=None,
        help="do not reload when the config file changes (SIGHUP still reloads)",
    )
    serve.add_argument(
        "--shared-state",
        metavar="URL",
        help="share state with the other replicas of this config through this Redis "
        '(redis://host:6379/0 or unix:///path.sock; pip install "mcpmount[redis]")',
    )
    serve.add_argument(
        "--call-log",
        metavar="TARGET",
        help="write one record per request to this JSON-lines file, to stdout (HTTP) or as "
        "OpenTelemetry log records (otel), instead of the config's call_log",
    )
    _add_serve_auth_flags(serve)


def _add_serve_auth_flags(serve: argparse.ArgumentParser) -> None:
    """The flags of who may use HTTP ``serve`` and read its metrics (each joins or replaces
    the ``[serve]`` key of its name)."""
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
        default=None,
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
