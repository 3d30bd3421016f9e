"""``mcpmount log``: serve's call log, its last records filtered, then followed.

The log is the file ``--file`` names, or the one the config's ``[serve] call_log`` does
(read from the TOML itself, so that a config whose tokens come from variables this shell
lacks can still be read from). Each record is a line (time, principal, method, name,
server, outcome, duration, bytes in/out), the text a client sent made visible (`shown`);
under ``--json``, each is its JSON line as the file holds it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tomllib
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
import anyio.lowlevel
from rich.console import Console
from rich.text import Text

from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK, UsageError
from mcpmount.cli._parser import DEFAULT_CONFIG
from mcpmount.cli._shown import visible
from mcpmount.cli._signals import until_signalled
from mcpmount.config import CALL_LOG_SINKS
from mcpmount.configfile import expand
from mcpmount.errors import ConfigError

if TYPE_CHECKING:
    from mcpmount.serve.calllog import LogFilter

__all__ = ["run_log"]

_AGO: Final = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_STYLES: Final = {"ok": "green", "tool_error": "yellow", "input_required": "cyan"}


def run_log(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Show the last records that pass the filters; then, with ``--follow``, each new one."""
    from mcpmount.serve.calllog import OUTCOMES, LogFilter, LogTail  # serve's, only here

    outcomes = None
    if args.outcome:
        outcomes = frozenset(o.strip() for each in args.outcome for o in each.split(",") if o)
        if unknown := sorted(outcomes - set(OUTCOMES)):
            raise UsageError(f"log: no outcome {', '.join(unknown)}: one of {', '.join(OUTCOMES)}")
    only = LogFilter(
        principal=args.principal,
        server=args.server,
        name=args.name,
        outcomes=outcomes,
        since=_since(args.since) if args.since else None,
    )
    path = log_path(args)
    if args.follow:
        return anyio.run(
            partial(until_signalled, partial(_follow, path, only, out, args.json, args.lines))
        )
    with LogTail(path) as tail:
        try:
            records = tail.read(only, args.lines or None)
        except FileNotFoundError:
            err.print(Text(f"no call log at {path} yet: serve writes it at the first request"))
            return EXIT_FAILED
        for record in records:
            _show(out, record, as_json=args.json)
    return EXIT_OK


async def _follow(path: Path, only: LogFilter, out: Console, as_json: bool, last: int) -> int:
    """Show the last records, then each new one, until cancelled (Ctrl-C)."""
    from mcpmount.serve.calllog import LogTail

    # A checkpoint first: `until_signalled`'s watcher takes SIGINT from then on, so a
    # Ctrl-C that comes as soon as a record shows still ends it cleanly.
    await anyio.lowlevel.checkpoint()
    with LogTail(path) as tail:
        try:
            records = tail.read(only, last or None)
        except FileNotFoundError:
            records = []
        for record in records:
            _show(out, record, as_json=as_json)
        async for record in tail.follow(only):
            _show(out, record, as_json=as_json)
    return EXIT_OK  # pragma: no cover - following ends only when cancelled


def log_path(args: argparse.Namespace) -> Path:
    """The call log file ``--file`` names, or the config's ``[serve] call_log``.

    Raises:
        ConfigError: The config cannot be read, or a variable of ``call_log`` is not set.
        UsageError: The config names no call log file.
    """
    if args.file:
        return Path(args.file)
    config = Path(args.config or DEFAULT_CONFIG)
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(config), [f"cannot read it: {exc.strerror}"]) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        raise ConfigError(str(config), ["not a TOML file: give the call log with --file"]) from None
    serve = data.get("serve")
    value = cast("dict[str, object]", serve).get("call_log") if isinstance(serve, dict) else None
    if not isinstance(value, str):
        raise UsageError(f"log: {config} has no [serve] call_log; give the file with --file PATH")
    problems: list[str] = []
    value = expand(value, "serve.call_log", os.environ, problems)
    if problems:
        raise ConfigError(str(config), problems)
    if value in CALL_LOG_SINKS:
        raise UsageError(f'log: {config} sends the call log to "{value}", not to a file')
    return config.parent / value


def _since(text: str) -> datetime:
    """``text`` as a time: ``30s``, ``10m``, ``2h``, ``1d`` ago, or an ISO time (UTC if
    it names no zone)."""
    if ago := _AGO.fullmatch(text.strip()):
        return datetime.now(UTC) - timedelta(seconds=float(ago[1]) * _UNITS[ago[2]])
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"log: --since {text!r}: write 30s, 10m, 2h, 1d or an ISO time (2026-01-31T09:00)"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _show(out: Console, record: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
        sys.stdout.flush()
        return
    outcome = str(record.get("outcome"))
    code = record.get("code")
    line = Text()
    line.append(str(record.get("time", "")).replace("T", " ").removesuffix("Z"), style="dim")
    line.append(f"  {visible(str(record.get('principal') or '-')):<16}")
    line.append(f"  {visible(str(record.get('method'))):<20}")
    line.append(f"  {visible(str(record.get('name') or '-'))}", style="bold")
    line.append(f"  {visible(str(record.get('server') or '-'))}")
    line.append(
        f"  {outcome}" + (f" {code}" if code is not None else ""), style=_STYLES.get(outcome, "red")
    )
    line.append(f"  {record.get('duration_ms')} ms", style="dim")
    line.append(f"  {record.get('bytes_in')}/{record.get('bytes_out')} B", style="dim")
    out.print(line, soft_wrap=True)
