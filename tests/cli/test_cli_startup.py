"""``--help``, ``--version`` and a usage error load nothing of the commands: no SDK, no
rich, no pydantic, no registry; the package's ``__init__`` imports its names on first use,
so the console script's ``from mcpmount.cli import main`` costs the parser alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcpmount.cli._parser import HOSTS
from mcpmount.hosts import HostApp

PROBE = """
import json, sys
before = set(sys.modules)
from mcpmount.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(set(sys.modules) - before)))
"""
"""Print the modules the command line loads for its arguments."""

HEAVY = ("mcp", "mcp_types", "rich", "pydantic", "anyio", "httpx2", "uvicorn", "starlette")

LIGHT = {
    "mcpmount",
    "mcpmount.cli",
    "mcpmount.cli._app",
    "mcpmount.cli._exit",
    "mcpmount.cli._log_args",
    "mcpmount.cli._parser",
    "mcpmount.cli._serve_args",
}
"""All the command line's own modules that parsing may load."""


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], ["call", "--help"], ["bogus-command"]], ids=str
)
def test_parsing_loads_no_command_nor_the_sdk(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    heavy = [name for name in loaded if name.split(".")[0] in HEAVY]
    assert not heavy
    assert {name for name in loaded if name.startswith("mcpmount")} <= LIGHT


def test_the_parsers_hosts_are_the_hosts_mcpmount_knows() -> None:
    assert [host.value for host in HostApp] == HOSTS
