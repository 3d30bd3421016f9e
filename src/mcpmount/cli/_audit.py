"""``mcpmount audit``: what a config's servers tell the model, and how it treats them.

Every server is mounted from its live lists, as ``check`` does, with no pins held (a
changed definition is read, not refused) and hidden characters stripped rather than
refused (so a server that ``hidden_text = "refuse"`` would refuse is read too, and what
it held is reported); then `mcpmount.audit.audit` checks the lists and the config, and
the servers are closed. Nothing else is run: no network call of its own, no model.

Findings are printed worst first, as a table or with ``--json``; the exit code is 1 when
one is at or above ``--fail-on`` (default ``high``), else 0. Secrets are never printed,
and server text goes through `shown` like every other command's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcpmount.audit import Finding, Severity, audit
from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK
from mcpmount.cli._shown import counted, print_json, shown
from mcpmount.cli.mounting import COMMAND_LINE, mount_showing
from mcpmount.config import RegistryConfig, SandboxTable, ServerSpec, StdioServer
from mcpmount.registry import Registry, read_pins

__all__ = ["run_audit", "severity_arg"]

_STYLES = {
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "dim",
}


def severity_arg(text: str) -> Severity:
    """``--fail-on``'s value: a severity by name (argparse turns the error into exit 2)."""
    try:
        return Severity.parse(text)
    except ValueError:
        names = ", ".join(s.label for s in Severity)
        raise argparse.ArgumentTypeError(f"must be one of {names}, not {text!r}") from None


def _read_as_is(config: RegistryConfig) -> RegistryConfig:
    """``config`` with every server mounted from its live lists, hidden text stripped."""
    settings = config.settings.model_copy(update={"start": "eager", "hidden_text": "strip"})
    each = {"start": "eager", "hidden_text": None}
    servers = {name: spec.model_copy(update=each) for name, spec in config.servers.items()}
    return dataclasses.replace(config, settings=settings, servers=servers)


def _with_sandbox_default(config: RegistryConfig) -> dict[str, ServerSpec]:
    """The servers, each stdio one that sets no ``sandbox`` given the registry's."""
    default = config.settings.sandbox
    if default is False:
        return dict(config.servers)
    table = SandboxTable(prefer=default == "prefer")
    return {
        name: spec.model_copy(update={"sandbox": table})
        if isinstance(spec, StdioServer) and spec.sandbox is None
        else spec
        for name, spec in config.servers.items()
    }


async def run_audit(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    pins = read_pins(config)
    pinned = None if pins is None else set(pins.servers)
    read = _read_as_is(config)
    async with Registry(read.settings, handlers=COMMAND_LINE) as registry:
        outcomes = await mount_showing(registry, read.servers, err, fail_fast=False)
        listings = registry.listings()
    failed = {o.server: o.error.detail for o in outcomes if o.error is not None}
    findings = audit(_with_sandbox_default(config), listings, pinned, failed)
    fail_on: Severity = args.fail_on
    failing = [f for f in findings if f.severity >= fail_on]
    if args.json:
        report = {
            "config": str(config.path) if config.path else None,
            "fail_on": fail_on.label,
            "ok": not failing,
            "counts": {s.label: sum(f.severity is s for f in findings) for s in Severity},
            "findings": [f.to_dict() for f in findings],
        }
        print_json(out, json.dumps(report))
    else:
        if findings:
            out.print(_table(findings, len(config.servers)))
        err.print(_summary(findings, failing, fail_on))
    return EXIT_FAILED if failing else EXIT_OK


def _table(findings: list[Finding], servers: int) -> Table:
    table = Table(
        title=Text(f"audit of {counted(servers, 'server')}: {counted(len(findings), 'finding')}")
    )
    for column in ("severity", "server"):
        table.add_column(column, no_wrap=True)
    table.add_column("item", overflow="fold", max_width=40)
    table.add_column("rule", no_wrap=True)
    table.add_column("finding", overflow="fold", min_width=40, ratio=1)
    for finding in findings:
        item = f"{finding.kind} {finding.item}" if finding.item is not None else ""
        table.add_row(
            Text(finding.severity.label, style=_STYLES[finding.severity]),
            Text(finding.server),
            shown(item),
            finding.rule,
            shown(finding.message),
        )
    return table


def _summary(findings: list[Finding], failing: list[Finding], fail_on: Severity) -> Text:
    counts = Counter(f.severity for f in findings)
    each = ", ".join(f"{counts[s]} {s.label}" for s in sorted(counts, reverse=True))
    found = f"{counted(len(findings), 'finding')} ({each})" if findings else "no findings"
    if failing:
        return Text(f"{found}; {len(failing)} at or above {fail_on.label}", style="red")
    return Text(f"{found}; none at or above {fail_on.label}", style="green")
