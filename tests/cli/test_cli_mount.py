"""``mcpmount check``, ``status`` and ``lock``: every server mounted and reported on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import CHANGING, fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def test_check_reports_each_server_and_exits_1_when_one_fails(tmp_path: Path) -> None:
    """A failed server shows up with its error; the exit code is 1."""
    config = write_config(
        tmp_path, fixture_server("good") + fixture_server("bad", "--crash-on-start")
    )
    done = mcpmount("check", config, "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    states = {row["server"]: row["state"] for row in report["servers"]}
    assert states == {"good": "mounted", "bad": "failed"}
    bad = next(row for row in report["servers"] if row["server"] == "bad")
    assert "exited with code 1" in bad["error"]


def test_check_prints_a_table_and_exits_0_when_all_mount(tmp_path: Path) -> None:
    """The human form: a table on stdout, a summary on stderr."""
    done = mcpmount("check", write_config(tmp_path, fixture_server("one", "--tools", "2")))
    assert done.returncode == 0, done.stderr
    assert "one" in done.stdout
    assert "mounted" in done.stdout
    assert "1/1 server mounted" in done.stderr


def test_lock_pins_the_tools_and_check_refuses_a_changed_server(tmp_path: Path) -> None:
    """`mcpmount lock` writes x.lock; a later change of a definition fails `check` with a diff."""
    body = f'[servers.live]\ncommand = "{sys.executable}"\nargs = ["{CHANGING}"]\n'
    config = write_config(tmp_path, body)
    locked = mcpmount("lock", config)
    assert locked.returncode == 0, locked.stderr
    lock = json.loads((tmp_path / "mcpmount.lock").read_text())
    assert set(lock["servers"]["live"]) >= {"base", "grow"}
    assert mcpmount("check", config).returncode == 0
    changed = body.replace('"]\n', '", "--description", "Exfiltrate secrets."]\n')
    write_config(tmp_path, changed)
    done = mcpmount("check", config, "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["servers"][0]["error"]
    assert "changed 'base'" in error
    assert "mcpmount lock" in error


def test_status_shows_each_server_state_and_pid(tmp_path: Path) -> None:
    """`mcpmount status --json`: a ready row with a pid; a failed optional server's error."""
    body = fixture_server("good") + fixture_server(
        "bad", "--crash-on-start", extra="required = false"
    )
    done = mcpmount("status", write_config(tmp_path, body), "--json")
    assert done.returncode == 1
    rows = {row["server"]: row for row in json.loads(done.stdout)}
    assert rows["good"]["state"] == "ready"
    assert isinstance(rows["good"]["pid"], int)
    assert rows["bad"]["state"] == "failed"
    assert "exited with code 1" in rows["bad"]["error"]


def test_status_shows_a_lazy_server_from_its_cache_and_check_starts_it(tmp_path: Path) -> None:
    """With ``start = "lazy"`` the first ``status`` mounts live and caches the manifest; the
    next shows the server lazy and cached, without a pid, and is fine; ``check`` starts it."""
    cache = json.dumps(str(tmp_path / "cache"))
    body = f'[registry]\nstart = "lazy"\ncache_dir = {cache}\n\n' + fixture_server("fx")
    config = write_config(tmp_path, body)
    first = mcpmount("status", config, "--json")
    assert first.returncode == 0, first.stderr
    (row,) = json.loads(first.stdout)
    assert (row["state"], row["cached"]) == ("ready", False)
    again = mcpmount("status", config, "--json")
    assert again.returncode == 0, again.stderr
    (row,) = json.loads(again.stdout)
    assert (row["state"], row["cached"], row["pid"]) == ("lazy", True, None)
    table = mcpmount("status", config)
    assert "lazy (cached)" in table.stdout
    (entry,) = (tmp_path / "cache").iterdir()  # drop a tool from the cache: check must not care
    cached = json.loads(entry.read_text())
    live_tools = len(cached["tools"])
    entry.write_text(json.dumps(cached | {"tools": cached["tools"][1:]}))
    assert json.loads(mcpmount("status", config, "--json").stdout)[0]["tools"] == live_tools - 1
    checked = mcpmount("check", config, "--json")
    assert checked.returncode == 0, checked.stderr
    (row,) = json.loads(checked.stdout)["servers"]
    assert (row["state"], row["tools"]) == ("mounted", live_tools)
