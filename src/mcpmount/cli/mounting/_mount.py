"""The commands that mount every server and report on each: ``check``, ``status``, ``lock``.

Server-provided text (errors, notes, a server's stderr quoted in them) is printed through
`shown` and `print_json`: never as markup, and with its control characters visible.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime
from pathlib import Path

import anyio
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from mcpmount.catalog import lock_path
from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK
from mcpmount.cli._serving import Serving, running_serves
from mcpmount.cli._shown import counted, print_json, shown
from mcpmount.cli.mounting._asking import COMMAND_LINE
from mcpmount.cli.mounting._opening import live, mount_showing, mounted
from mcpmount.config import RegistryConfig, ServerSpec
from mcpmount.errors import ConfigError
from mcpmount.registry import Registry, read_pins, status_json
from mcpmount.sandbox import mounts_of, summary

__all__ = ["run_check", "run_lock", "run_status"]


# -- check ------------------------------------------------------------------------------------


async def run_check(
    config: RegistryConfig, as_json: bool, out: Console, err: Console, *, refresh: bool = False
) -> int:
    began = time.perf_counter()
    config = live(config)
    from mcpmount.serve.credentials import check_token_key  # serve's weight, only here

    check_token_key(config)  # serve would refuse to start: say it before mounting
    pins = read_pins(config)
    registry = Registry(config.settings, pins=pins, refresh_cache=refresh, handlers=COMMAND_LINE)
    async with registry:
        rows = await mount_showing(registry, config.servers, err, fail_fast=False)
        mounted_in = time.perf_counter() - began
    failed = [row for row in rows if row.error is not None]
    if as_json:
        report = {
            "config": str(config.path) if config.path else None,
            "ok": not failed,
            "seconds": round(mounted_in, 3),
            "notes": list(config.notes),
            "servers": [
                {
                    "server": row.server,
                    "transport": row.spec.transport,
                    "sandbox": summary(row.spec, config.settings),
                    "sandbox_mounts": _mounts(row.spec, config),
                    "required": row.spec.required,
                    "state": "failed" if row.error else "mounted",
                    "tools": row.tools,
                    "deferred": row.deferred,
                    "startup_ms": round(row.seconds * 1000),
                    "error": row.error.detail if row.error else None,
                    "notes": list(row.notes),
                }
                for row in rows
            ],
        }
        print_json(out, json.dumps(report))
    else:
        table = Table(title=Text(f"{config.path or 'config'}: {counted(len(rows), 'server')}"))
        for column in ("server", "transport", "sandbox", "state", "tools", "startup"):
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
                summary(row.spec, config.settings),
                state,
                tools,
                f"{row.seconds * 1000:.0f} ms",
                shown(row.error.detail if row.error else "", lines=True),
            )
        out.print(table)
        for note in config.notes:  # from the file: a disabled server, an idle autoApprove
            err.print(shown(note, "yellow", lines=True))
        for row in rows:
            for note in row.notes:
                err.print(shown(f"{row.server}: {note}", "yellow", lines=True))
        total = sum(row.tools for row in rows)
        mounted = f"{len(rows) - len(failed)}/{counted(len(rows), 'server')} mounted"
        totals = f"{mounted}, {counted(total, 'tool')}, "
        err.print(Text(totals + f"in {mounted_in:.2f} s", style="red" if failed else "green"))
    return EXIT_FAILED if failed else EXIT_OK


def _mounts(spec: ServerSpec, config: RegistryConfig) -> dict[str, object] | None:
    """What the server's sandbox shows of the host (None: it runs unsandboxed)."""
    mounts = mounts_of(spec, config.settings)
    return mounts.as_json() if mounts is not None else None


# -- status -----------------------------------------------------------------------------------


async def run_status(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    if config.path is not None and not args.local:
        serves = await running_serves(config.path, err)
        if serves:  # their servers, not copies started here
            return await _show_serves(config.path, serves, args, out, err)
    async with Registry(config.settings, pins=read_pins(config), handlers=COMMAND_LINE) as registry:
        outcomes = await mount_showing(registry, config.servers, err, fail_fast=False)
        failed = [row for row in outcomes if row.error is not None]

        def rows() -> list[dict[str, object]]:
            return status_json(registry.status(), failed, config.servers, config.settings)

        if args.json:
            print_json(out, json.dumps(rows()))
        elif args.watch is None:
            out.print(_status_table(rows()))
        else:
            with Live(_status_table(rows()), console=out, auto_refresh=False) as watched:
                while True:  # until Ctrl-C; each refresh reads the registry, nothing else
                    await anyio.sleep(args.watch)
                    watched.update(_status_table(rows()), refresh=True)
        return EXIT_FAILED if _unwell(rows()) else EXIT_OK


async def _show_serves(
    config: Path, serves: list[Serving], args: argparse.Namespace, out: Console, err: Console
) -> int:
    """Show the servers of the running serves of ``config`` (one table each), or, with
    ``--watch``, keep asking them until none answers."""
    for serving in serves:
        began = datetime.fromtimestamp(serving.since).strftime("%Y-%m-%d %H:%M:%S")
        said = f"pid {serving.pid}, {serving.transport}, since {began}"
        note = Text(f"mcpmount: showing the running serve ({said}); --local mounts here")
        err.print(note, soft_wrap=True)
    if args.json:
        rows = [{**row, "served_by": each.pid} for each in serves for row in each.servers]
        print_json(out, json.dumps(rows))
    elif args.watch is None:
        for serving in serves:
            out.print(_status_table(serving.servers, f"serve pid {serving.pid}"))
    else:
        with Live(_serves_tables(serves), console=out, auto_refresh=False) as watched:
            while True:  # until Ctrl-C, or until no serve answers
                await anyio.sleep(args.watch)
                if not (serves := await running_serves(config, err)):
                    err.print(Text(f"mcpmount: no serve of {config} runs any more", style="red"))
                    return EXIT_FAILED
                watched.update(_serves_tables(serves), refresh=True)
    return EXIT_FAILED if any(_unwell(serving.servers) for serving in serves) else EXIT_OK


_WELL = ("ready", "starting", "lazy", "idle")
"""States of a server that is fine: up, coming up behind its cached tools, or not started
until a call needs it."""


def _unwell(rows: list[dict[str, object]]) -> bool:
    return any(row.get("state") not in _WELL for row in rows)


def _serves_tables(serves: list[Serving]) -> Group:
    return Group(*(_status_table(each.servers, f"serve pid {each.pid}") for each in serves))


def _status_table(rows: list[dict[str, object]], whose: str = "") -> Table:
    """The rows of `status_json` as a table, titled with their count and ``whose`` they are."""
    title = counted(len(rows), "server") + (f", {whose}" if whose else "")
    table = Table(title=Text(title))
    columns = ("server", "transport", "sandbox", "state", "pid", "tools", "restarts", "calls")
    for column in (*columns, "p50", "p95"):
        right = column in ("pid", "tools", "restarts", "calls", "p50", "p95")
        table.add_column(column, justify="right" if right else "left", no_wrap=True)
    table.add_column("error", overflow="fold")
    styles = {
        "ready": "green",
        "restarting": "yellow",
        "starting": "yellow",
        "lazy": "cyan",
        "idle": "cyan",
    }
    for row in rows:
        state = str(row.get("state"))
        style = styles.get(state, "red" if row.get("required", True) else "yellow")
        deferred = f" ({row['deferred']} deferred)" if row.get("deferred") else ""
        table.add_row(
            Text(str(row.get("server"))),
            Text(str(row.get("transport"))),
            Text(str(row.get("sandbox"))),
            Text(state + (" (cached)" if row.get("cached") else ""), style=style),
            _cell(row, "pid"),
            _cell(row, "tools") + deferred,
            _cell(row, "restarts"),
            _cell(row, "calls"),
            _milliseconds(row, "p50_ms"),
            _milliseconds(row, "p95_ms"),
            shown(_why(row), lines=True),
        )
    return table


def _why(row: dict[str, object]) -> str:
    """A row's error, and what is next for a server a serve retries."""
    error, retry = row.get("error"), row.get("retry")
    return f"{error or ''}; {retry}" if retry else str(error or "")


def _milliseconds(row: dict[str, object], key: str) -> str:
    value = row.get(key)
    return f"{value:.1f} ms" if isinstance(value, int | float) else ""


def _cell(row: dict[str, object], key: str) -> str:
    """A number of ``row`` as a cell: empty where it has none (a failed server)."""
    value = row.get(key)
    return "" if value is None else str(value)


# -- lock -------------------------------------------------------------------------------------


async def run_lock(config: RegistryConfig, out: Console, err: Console) -> int:
    if config.path is None:  # pragma: no cover - the command line always reads a file
        raise ConfigError("<config>", ["mcpmount lock needs a config file to write beside"])
    previous = read_pins(config)
    async with mounted(live(config), err, use_lock=False) as registry:
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
    sections = pins.content or {}
    prompts = sum(len(p) for p in sections.get("prompts", {}).values())
    resources = sum(
        len(r) for kind in ("resources", "templates") for r in sections.get(kind, {}).values()
    )
    pinned = f"{tools} tool, {prompts} prompt and {resources} resource definitions pinned"
    out.print(Text(f"wrote {path}: {counted(len(servers), 'server')}, {pinned}"))
    return EXIT_OK
