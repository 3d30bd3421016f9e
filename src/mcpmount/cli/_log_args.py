"""The arguments of ``mcpmount log`` (standard library only, as the parser is)."""

from __future__ import annotations

import argparse

__all__ = ["add_log"]


def add_log(log: argparse.ArgumentParser) -> None:
    """The arguments of ``log``: where the call log is, which records, and following it."""
    log.add_argument(
        "config",
        nargs="?",
        help="the config whose [serve] call_log to read (default mcpmount.toml)",
    )
    log.add_argument("--file", metavar="PATH", help="read this call log file, not the config's")
    log.add_argument("--principal", help="only this principal's requests (token:NAME, ...)")
    log.add_argument("--server", help="only requests of this server (namespace)")
    log.add_argument(
        "--name", "--tool", metavar="GLOB", help="only names (tools, prompts, URIs) matching GLOB"
    )
    log.add_argument(
        "--outcome",
        action="append",
        metavar="OUTCOME",
        help="only this outcome: ok, tool_error, input_required, unknown, denied, "
        "rate_limited, invalid, error or cancelled (repeatable, or comma-separated)",
    )
    log.add_argument(
        "--since", metavar="WHEN", help="only requests since WHEN: 30s, 10m, 2h, 1d, or an ISO time"
    )
    log.add_argument(
        "-n", "--lines", type=int, default=20, help="how many of the last records (0: all)"
    )
    log.add_argument(
        "-f", "--follow", action="store_true", help="then show each new record until Ctrl-C"
    )
