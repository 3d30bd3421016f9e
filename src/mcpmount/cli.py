"""The ``mcpmount`` command line: a thin layer over the public API.

Data goes to stdout (rich tables, or ``--json``); diagnostics go to stderr. Exit codes:
0 ok, 1 a server or call failed, 2 bad config or usage.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import mcp_types
from rich.console import Console
from rich.live import Live
from rich.logging import RichHandler
from rich.table import Table
from rich.text import Text

from mcpmount.catalog import lock_path
from mcpmount.config import RegistryConfig, load_config
from mcpmount.errors import ConfigError, RegistryError
from mcpmount.registry import MountOutcome, Registry, open_registry, read_pins

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_CONFIG = "mcpmount.toml"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by ``python -m mcpmount``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if (
        args.command == "call"
        and args.config is None
        and not args.arguments.lstrip().startswith("{")
    ):
        args.config, args.arguments = args.arguments, "{}"  # `call NAME CONFIG`: no arguments
    _configure_logging(args.verbose)
    # Piped output keeps whole rows (a terminal's width is unknown there); --json is for scripts.
    out = Console() if sys.stdout.isatty() else Console(width=200)
    err = Console(stderr=True)
    try:
        config = load_config(args.config or DEFAULT_CONFIG)
    except ConfigError as exc:
        err.print(Text(str(exc), style="red"))
        return EXIT_USAGE
    try:
        match args.command:
            case "check":
                return anyio.run(_check, config, args.json, out, err)
            case "tools":
                return anyio.run(_tools, config, args, out)
            case "search":
                return anyio.run(_search, config, args, out)
            case "call":
                return anyio.run(_call, config, args, out, err)
            case "serve":
                return anyio.run(_serve, config, args, err)
            case "status":
                return anyio.run(_status, config, args, out, err)
            case "lock":
                return anyio.run(_lock, config, out, err)
            case _:  # pragma: no cover - argparse rejects unknown commands
                parser.error(f"unknown command {args.command!r}")
    except ConfigError as exc:  # e.g. an unreadable lock file
        err.print(Text(str(exc), style="red"))
        return EXIT_USAGE
    except RegistryError as exc:  # MountError included: one line per failed server
        err.print(Text(str(exc), style="red"))
        return EXIT_FAILED
    except OSError as exc:  # e.g. serve cannot bind its address, lock cannot write its file
        err.print(Text(f"{args.command}: {exc}", style="red"))
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpmount", description="Mount many MCP servers as one namespaced tool registry."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
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

    config_arg(command("check", "mount every server, show how each did, close them all"))
    status = command("status", "mount every server and show its state, pid, restarts, latency")
    config_arg(status)
    status.add_argument(
        "--watch", type=float, metavar="SECONDS", help="keep the servers up; refresh every SECONDS"
    )
    config_arg(
        command("lock", "pin every mounted tool's definition in a lock file beside the config")
    )
    tools = command("tools", "list the mounted tools under their public names")
    config_arg(tools)
    search = command("search", "rank the mounted tools (deferred ones included) for a query")
    search.add_argument("query", help='keywords, "select:a,b" or "+required words"')
    config_arg(search)
    search.add_argument("-n", "--limit", type=int, default=5, help="how many results (1-20)")
    call = command("call", "call one tool and print its result")
    call.add_argument("name", help="the public tool name, e.g. fs__read_file")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    config_arg(call)
    call.add_argument("--timeout", type=float, help="seconds to wait for the result")
    serve = commands.add_parser(
        "serve",
        help="serve every mounted tool as one MCP server (stdio or streamable HTTP)",
        description="Serve every mounted tool as one MCP server. Answers at once, mounts the "
        "servers in the background, tells clients when the tool list changes, and closes "
        "every server on SIGINT, SIGTERM or (stdio) stdin EOF.",
    )
    config_arg(serve)
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")
    serve.add_argument("--port", type=int, default=8000, help="HTTP: port (0: the OS picks)")
    serve.add_argument(
        "--stateless", action="store_true", help="HTTP: no sessions (behind a load balancer)"
    )
    serve.add_argument("--portfile", help="HTTP: write the bound port to this file once serving")
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = RichHandler(console=Console(stderr=True), show_path=False, markup=False)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    if verbosity < 2:
        # The SDK logs every unparseable server line with a traceback; we report it ourselves.
        logging.getLogger("mcp").setLevel(logging.ERROR)
    # These log whole URLs (userinfo, query tokens) and session ids at INFO and DEBUG:
    # secrets, never shown at any verbosity.
    for name in ("httpx2", "httpcore2", "mcp.client.streamable_http"):
        logging.getLogger(name).setLevel(logging.WARNING)


# -- check ------------------------------------------------------------------------------------


async def _mount_each(
    registry: Registry, config: RegistryConfig, err: Console
) -> list[MountOutcome]:
    """Mount every server concurrently, whatever fails, showing progress on stderr."""
    done = 0
    with err.status(f"mounting {len(config.servers)} servers...") as status:

        def progress(_: MountOutcome) -> None:
            nonlocal done
            done += 1
            status.update(f"mounting servers: {done}/{len(config.servers)} done")

        return await registry.mount_each(config.servers, on_outcome=progress)


async def _check(config: RegistryConfig, as_json: bool, out: Console, err: Console) -> int:
    began = time.perf_counter()
    async with Registry(config.settings, pins=read_pins(config)) as registry:
        rows = await _mount_each(registry, config, err)
        mounted_in = time.perf_counter() - began
    failed = [row for row in rows if row.error is not None]
    if as_json:
        report = {
            "config": str(config.path) if config.path else None,
            "ok": not failed,
            "seconds": round(mounted_in, 3),
            "servers": [
                {
                    "server": row.server,
                    "transport": row.spec.transport,
                    "required": row.spec.required,
                    "state": "failed" if row.error else "mounted",
                    "tools": row.tools,
                    "deferred": row.deferred,
                    "startup_ms": round(row.seconds * 1000),
                    "error": row.error.detail if row.error else None,
                }
                for row in rows
            ],
        }
        out.print_json(json.dumps(report))
    else:
        table = Table(title=Text(f"{config.path or 'config'}: {len(rows)} servers"))
        for column in ("server", "transport", "state", "tools", "startup"):
            table.add_column(column, justify="right" if column in ("tools", "startup") else "left")
        table.add_column("error", overflow="fold")
        for row in rows:
            state = Text("failed", style="red") if row.error else Text("mounted", style="green")
            if row.error and not row.spec.required:
                state = Text("skipped", style="yellow")
            tools = f"{row.tools}" + (f" ({row.deferred} deferred)" if row.deferred else "")
            table.add_row(
                Text(row.server),
                row.spec.transport,
                state,
                tools,
                f"{row.seconds * 1000:.0f} ms",
                Text(row.error.detail if row.error else ""),
            )
        out.print(table)
        total = sum(row.tools for row in rows)
        summary = f"{len(rows) - len(failed)}/{len(rows)} servers mounted, {total} tools, "
        err.print(Text(summary + f"in {mounted_in:.2f} s", style="red" if failed else "green"))
    return EXIT_FAILED if failed else EXIT_OK


# -- status and lock ---------------------------------------------------------------------------


async def _status(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with Registry(config.settings, pins=read_pins(config)) as registry:
        outcomes = await _mount_each(registry, config, err)
        failed = {row.server: row for row in outcomes if row.error is not None}
        if args.json:
            out.print_json(json.dumps(_status_json(registry, failed)))
        elif args.watch is None:
            out.print(_status_table(registry, failed))
        else:
            with Live(_status_table(registry, failed), console=out, auto_refresh=False) as live:
                while True:  # until Ctrl-C; each refresh reads the registry, nothing else
                    await anyio.sleep(args.watch)
                    live.update(_status_table(registry, failed), refresh=True)
        unwell = any(row.state != "ready" for row in registry.status())
    return EXIT_FAILED if failed or unwell else EXIT_OK


def _status_table(registry: Registry, failed: Mapping[str, MountOutcome]) -> Table:
    table = Table(title=Text(f"{len(registry.status()) + len(failed)} servers"))
    for column in ("server", "transport", "state", "pid", "tools", "restarts", "calls", "p50"):
        right = column in ("pid", "tools", "restarts", "calls", "p50")
        table.add_column(column, justify="right" if right else "left", no_wrap=True)
    table.add_column("error", overflow="fold")
    styles = {"ready": "green", "restarting": "yellow", "starting": "yellow"}
    for row in registry.status():
        tools = f"{row.tools}" + (f" ({row.deferred} deferred)" if row.deferred else "")
        table.add_row(
            Text(row.server),
            row.transport,
            Text(row.state, style=styles.get(row.state, "red")),
            str(row.pid or ""),
            tools,
            str(row.restarts),
            str(row.calls),
            f"{row.p50_ms:.1f} ms" if row.p50_ms is not None else "",
            Text(row.error or ""),
        )
    for outcome in failed.values():
        error = outcome.error.detail if outcome.error else ""
        state = Text("failed", style="red" if outcome.spec.required else "yellow")
        table.add_row(
            Text(outcome.server), outcome.spec.transport, state, "", "", "", "", "", Text(error)
        )
    return table


def _status_json(registry: Registry, failed: Mapping[str, MountOutcome]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {
            "server": row.server,
            "transport": row.transport,
            "state": str(row.state),
            "pid": row.pid,
            "tools": row.tools,
            "deferred": row.deferred,
            "restarts": row.restarts,
            "calls": row.calls,
            "p50_ms": row.p50_ms,
            "error": row.error,
        }
        for row in registry.status()
    ]
    for outcome in failed.values():
        error = outcome.error.detail if outcome.error else None
        rows.append(
            {
                "server": outcome.server,
                "transport": outcome.spec.transport,
                "state": "failed",
                "error": error,
            }
        )
    return rows


async def _lock(config: RegistryConfig, out: Console, err: Console) -> int:
    if config.path is None:  # pragma: no cover - the command line always reads a file
        raise ConfigError("<config>", ["mcpmount lock needs a config file to write beside"])
    previous = read_pins(config)
    async with open_registry(config, use_lock=False) as registry:
        pins = registry.lock(previous)
        skipped = registry.failures
    for server in skipped:  # an optional server that is down keeps the pins it had
        if server in pins.servers:
            err.print(Text(f"{server}: not mounted; its previous pins are kept", style="yellow"))
        else:
            err.print(Text(f"{server}: not mounted and never pinned", style="yellow"))
    servers = pins.servers
    path = lock_path(config.path)
    pins.write(path)
    tools = sum(len(t) for t in servers.values())
    out.print(Text(f"wrote {path}: {len(servers)} servers, {tools} tool definitions pinned"))
    return EXIT_OK


# -- tools and search -------------------------------------------------------------------------


async def _tools(config: RegistryConfig, args: argparse.Namespace, out: Console) -> int:
    async with open_registry(config) as registry:
        tools = registry.mounted_tools()
        if args.json:
            rows = [
                {"name": t.name, "server": t.server, "raw_name": t.raw_name, "deferred": t.deferred}
                | {"description": t.definition.description}
                for t in tools
            ]
            out.print_json(json.dumps(rows))
            return EXIT_OK
        raws = [t.raw_name for t in tools if t.renamed]
        table = Table(title=Text(f"{len(tools)} tools"))
        table.add_column(
            "name", no_wrap=True, min_width=len(max((t.name for t in tools), default=""))
        )
        table.add_column("raw name", no_wrap=True, min_width=len(max(raws, default="")))
        table.add_column("deferred", no_wrap=True, min_width=8)
        table.add_column(
            "description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60
        )
        for tool in tools:
            table.add_row(
                Text(tool.name),
                Text(tool.raw_name if tool.renamed else ""),
                "deferred" if tool.deferred else "",
                Text(_first_line(tool.definition.description)),
            )
        out.print(table)
    return EXIT_OK


async def _search(config: RegistryConfig, args: argparse.Namespace, out: Console) -> int:
    async with open_registry(config) as registry:
        found = registry.search(args.query, args.limit)
    if args.json:
        hits = [{"name": h.tool.name, "score": round(h.score, 4)} for h in found.hits]
        out.print_json(json.dumps({"hits": hits, "hint": found.hint}))
        return EXIT_OK
    table = Table(title=Text(f"search: {args.query}"))
    names = [hit.tool.name for hit in found.hits]
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("name", no_wrap=True, min_width=len(max(names, default="")))
    table.add_column("score", justify="right", no_wrap=True, min_width=6)
    table.add_column("deferred", no_wrap=True, min_width=8)
    table.add_column("description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60)
    for rank, hit in enumerate(found.hits, 1):
        table.add_row(
            str(rank),
            Text(hit.tool.name),
            f"{hit.score:.3f}",
            "deferred" if hit.tool.deferred else "",
            Text(_first_line(hit.tool.definition.description)),
        )
    out.print(table)
    if found.hint:
        out.print(Text(found.hint, style="yellow"))
    return EXIT_OK


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


# -- call -------------------------------------------------------------------------------------


async def _call(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    try:
        arguments: Any = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        err.print(Text(f"arguments are not valid JSON: {exc}", style="red"))
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        err.print(Text('arguments must be a JSON object, e.g. \'{"path": "a.txt"}\'', style="red"))
        return EXIT_USAGE
    async with open_registry(config) as registry:
        result = await registry.call(args.name, arguments, timeout=args.timeout)  # pyright: ignore[reportUnknownArgumentType]
    if args.json:
        out.print_json(result.model_dump_json(by_alias=True, exclude_none=True))
    else:
        _print_result(result, out)
    if result.is_error:
        err.print(Text(f"{args.name} reported an error", style="red"))
        return EXIT_FAILED
    return EXIT_OK


def _print_result(result: mcp_types.CallToolResult, out: Console) -> None:
    for block in result.content:
        match block:
            case mcp_types.TextContent():
                out.print(Text(block.text))
            case mcp_types.ImageContent() | mcp_types.AudioContent():
                out.print(
                    Text(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 chars]")
                )
            case _:
                out.print_json(block.model_dump_json(by_alias=True, exclude_none=True))
    if result.structured_content is not None and not result.content:
        out.print_json(json.dumps(result.structured_content))


# -- serve ------------------------------------------------------------------------------------


async def _serve(config: RegistryConfig, args: argparse.Namespace, err: Console) -> int:
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
    )
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
