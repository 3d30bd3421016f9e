"""``check`` and ``status`` show each server's sandbox; without a sandbox tool, ``true``
refuses the server saying what to install, and ``"prefer"`` runs it with one warning.

Run through ``mcpmount`` as a user runs it. A machine without bwrap is one whose PATH
finds none: the servers' commands are absolute paths.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def run(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """``mcpmount ARGS``, with ``PATH`` replaced if ``path`` is given."""
    return mcpmount(*args, env=dict(os.environ) | ({"PATH": path} if path is not None else {}))


def test_check_and_status_show_each_servers_sandbox(tmp_path: Path) -> None:
    """One row per server says ``bwrap`` and its network, or ``none``."""
    assert shutil.which("bwrap"), "this test needs bwrap: apt-get install bubblewrap"
    config = write_config(
        tmp_path,
        fixture_server("boxed", extra="sandbox = true")
        + fixture_server("listed", extra='sandbox = { network = ["api.example.com"] }')
        + fixture_server("free"),
    )
    expected = {
        "boxed": "bwrap, network off",
        "listed": "bwrap, network: api.example.com",
        "free": "none",
    }
    checked = run("check", config, "--json")
    assert checked.returncode == 0, checked.stderr
    assert {s["server"]: s["sandbox"] for s in json.loads(checked.stdout)["servers"]} == expected
    status = run("status", config, "--json")
    assert status.returncode == 0, status.stderr
    assert {s["server"]: s["sandbox"] for s in json.loads(status.stdout)} == expected
    table = run("check", config)
    assert "bwrap, network off" in table.stdout


def test_without_a_sandbox_tool_true_refuses_and_prefer_warns_once(tmp_path: Path) -> None:
    """``true`` fails naming bubblewrap; ``"prefer"`` mounts unsandboxed after one warning."""
    empty = tmp_path / "bin"
    empty.mkdir()
    config = write_config(
        tmp_path,
        fixture_server("strict", extra="sandbox = true")
        + fixture_server("lenient", extra='sandbox = "prefer"'),
    )
    done = run("check", config, "--json", path=str(empty))
    assert done.returncode == 1
    rows = {s["server"]: s for s in json.loads(done.stdout)["servers"]}
    assert rows["strict"]["state"] == "failed"
    assert rows["strict"]["sandbox"] == "refused (no sandbox tool)"
    assert "install bubblewrap (apt install bubblewrap" in rows["strict"]["error"]
    assert rows["lenient"]["state"] == "mounted"
    assert rows["lenient"]["sandbox"] == "none (no sandbox tool)"
    warnings = [line for line in done.stderr.splitlines() if "runs unsandboxed" in line]
    assert len(warnings) == 1
    assert "'lenient'" in warnings[0]
