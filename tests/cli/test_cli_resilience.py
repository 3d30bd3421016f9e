"""``mcpmount tools`` and ``check`` beside a server that hangs: what mounted is listed, what
did not is named with why, once its ``startup_timeout`` has passed; ``required = true``
keeps all or nothing.

The hung server is the fixture server with ``--no-init``: it reads stdin and never answers
its handshake. Before, ``tools`` waited for it and then listed nothing (exit 1).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

HUNG_TIMEOUT = 4
"""The hung server's ``startup_timeout``."""

BOUND = HUNG_TIMEOUT + 20
"""Seconds a command may take beside it: its timeout, and starting Python processes on a
loaded machine."""


def good_and_hung(tmp_path: Path, extra: str = "") -> str:
    hung = fixture_server("hung", "--no-init", extra=f"startup_timeout = {HUNG_TIMEOUT}\n{extra}")
    return write_config(tmp_path, fixture_server("good") + hung)


def test_tools_lists_what_mounted_and_names_the_hung_server(tmp_path: Path) -> None:
    """The good server's tools on stdout, exit 0; the hung one named on stderr with its
    timeout, within the bound."""
    config = good_and_hung(tmp_path)
    began = time.monotonic()
    done = mcpmount("tools", config)
    assert time.monotonic() - began < BOUND
    assert done.returncode == 0, done.stderr
    assert "good__echo" in done.stdout
    assert "hung__" not in done.stdout
    said = " ".join(done.stderr.split())
    assert "hung: not mounted:" in said
    assert f"within {HUNG_TIMEOUT} s (startup_timeout)" in said


def test_tools_json_lists_what_mounted(tmp_path: Path) -> None:
    """``--json``: the mounted tools as before, one JSON list; the mark on stderr."""
    done = mcpmount("tools", good_and_hung(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    listed = {row["server"] for row in json.loads(done.stdout)}
    assert listed == {"good"}
    assert "hung: not mounted" in done.stderr


def test_check_marks_the_hung_server_failed_and_the_good_one_mounted(tmp_path: Path) -> None:
    """``check`` reports both, the hung one with why, and exits 1."""
    began = time.monotonic()
    done = mcpmount("check", good_and_hung(tmp_path), "--json")
    assert time.monotonic() - began < BOUND
    assert done.returncode == 1
    rows = {row["server"]: row for row in json.loads(done.stdout)["servers"]}
    assert (rows["good"]["state"], rows["hung"]["state"]) == ("mounted", "failed")
    assert rows["good"]["tools"] > 0
    assert f"within {HUNG_TIMEOUT} s" in rows["hung"]["error"]


def test_tools_beside_a_required_hung_server_lists_nothing(tmp_path: Path) -> None:
    """``required = true`` keeps all or nothing: exit 1, naming the server; no tools."""
    done = mcpmount("tools", good_and_hung(tmp_path, "required = true"))
    assert done.returncode == 1
    assert "good__echo" not in done.stdout
    said = " ".join(done.stderr.split())
    assert "1 required server failed to mount" in said
    assert "hung" in said
