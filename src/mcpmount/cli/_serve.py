"""``mcpmount serve``: every mounted tool as one MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK
from mcpmount.config import RegistryConfig

__all__ = ["run_serve"]


async def run_serve(config: RegistryConfig, args: argparse.Namespace, err: Console) -> int:
    from mcpmount.serve import serve, write_portfile  # uvicorn only when serving

    def ready(url: str) -> None:
        err.print(Text(f"mcpmount: serving MCP at {url}"))
        if args.portfile:
            write_portfile(args.portfile, url)

    await serve(
        config,
        transport=args.transport,
        host=args.host,
        port=args.port,
        stateless=args.stateless,
        on_ready=ready,
        watch=not args.no_watch,
        shared_state=args.shared_state,
    )
    return EXIT_OK
