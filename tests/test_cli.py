"""The command line, run as a user runs it: a subprocess, real servers, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
FIXTURE = Path(__file__).parent / "servers" / "fixture_server.py"
SECRET = "s3cr3t-token-value-4242"

pytestmark = pytest.mark.usefixtures("no_leaks")


def mcpmount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpmount", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write_config(tmp_path: Path, body: str) -> str:
    path = tmp_path / "mcpmount.toml"
    path.write_text(body)
    return str(path)


def server(name: str, *flags: str, extra: str = "") -> str:
    args = json.dumps([str(FIXTURE), *flags])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{extra}\n'


def test_check_reports_each_server_and_exits_1_when_one_fails(tmp_path: Path) -> None:
    """A failed server shows up with its error; the exit code is 1."""
    config = write_config(tmp_path, server("good") + server("bad", "--crash-on-start"))
    done = mcpmount("check", config, "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    states = {row["server"]: row["state"] for row in report["servers"]}
    assert states == {"good": "mounted", "bad": "failed"}
    bad = next(row for row in report["servers"] if row["server"] == "bad")
    assert "exited with code 1" in bad["error"]


def test_check_prints_a_table_and_exits_0_when_all_mount(tmp_path: Path) -> None:
    """The human form: a table on stdout, a summary on stderr."""
    done = mcpmount("check", write_config(tmp_path, server("one", "--tools", "2")))
    assert done.returncode == 0, done.stderr
    assert "one" in done.stdout
    assert "mounted" in done.stdout
    assert "1/1 servers mounted" in done.stderr


def test_a_bad_config_exits_2_naming_the_key_and_hiding_the_secret(tmp_path: Path) -> None:
    """A misspelled key is named with a suggestion; its secret value never appears."""
    body = server("one", extra=f'enw = {{ TOKEN = "{SECRET}" }}')
    done = mcpmount("check", write_config(tmp_path, body))
    assert done.returncode == 2
    assert "servers.one.enw" in done.stderr
    assert "env" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_a_missing_config_file_exits_2(tmp_path: Path) -> None:
    """The default path does not exist in an empty directory."""
    done = mcpmount("tools", str(tmp_path / "nope.toml"))
    assert done.returncode == 2
    assert "file not found" in done.stderr


def test_tools_lists_public_and_raw_names(tmp_path: Path) -> None:
    """--json gives each public name with the raw name it routes to."""
    names = json.dumps(["files.read", "plain"])
    done = mcpmount("tools", write_config(tmp_path, server("leg", "--names", names)), "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["raw_name"]: row["name"] for row in json.loads(done.stdout)}
    assert rows["plain"] == "leg__plain"
    assert rows["files.read"].startswith("leg__files_read_")


def test_server_text_with_rich_markup_is_printed_literally(tmp_path: Path) -> None:
    """A description holding `[/bold]` is data, not markup: no crash, shown as is."""
    raw = json.dumps(
        [{"name": "evil", "description": "[/bold] [red]x", "inputSchema": {"type": "object"}}]
    )
    done = mcpmount("tools", write_config(tmp_path, server("m", "--raw-tools", raw)))
    assert done.returncode == 0, done.stderr
    assert "[/bold] [red]x" in done.stdout


def test_call_prints_the_result_and_exits_by_is_error(tmp_path: Path) -> None:
    """A result exits 0; a tool error result exits 1 and is still printed."""
    config = write_config(tmp_path, server("one"))
    ok = mcpmount("call", "one__echo", '{"text": "hello there"}', config)
    assert ok.returncode == 0, ok.stderr
    assert "hello there" in ok.stdout
    failed = mcpmount("call", "one__fail", '{"message": "disk full"}', config)
    assert failed.returncode == 1
    assert "disk full" in failed.stdout


def test_call_of_an_unknown_tool_exits_1_with_suggestions(tmp_path: Path) -> None:
    """The registry's own failure is an error message naming the tool."""
    done = mcpmount("call", "one__ecko", "{}", write_config(tmp_path, server("one")))
    assert done.returncode == 1
    assert "one__echo" in done.stderr


def test_call_with_arguments_that_are_not_an_object_exits_2(tmp_path: Path) -> None:
    """Usage errors are exit 2, before any server starts."""
    done = mcpmount("call", "one__echo", "[1, 2]", write_config(tmp_path, server("one")))
    assert done.returncode == 2
    assert "JSON object" in done.stderr


def test_search_ranks_deferred_tools(tmp_path: Path) -> None:
    """`mcpmount search` finds a deferred tool by what it does."""
    config = write_config(tmp_path, server("one", extra="defer = true"))
    done = mcpmount("search", "add two numbers", config, "--json")
    assert done.returncode == 0, done.stderr
    hits = [hit["name"] for hit in json.loads(done.stdout)["hits"]]
    assert hits[0] == "one__add"


def test_lock_pins_the_tools_and_check_refuses_a_changed_server(tmp_path: Path) -> None:
    """`mcpmount lock` writes x.lock; a later change of a definition fails `check` with a diff."""
    changing = Path(__file__).parent / "servers" / "changing_server.py"
    body = f'[servers.live]\ncommand = "{sys.executable}"\nargs = ["{changing}"]\n'
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
    body = server("good") + server("bad", "--crash-on-start", extra="required = false")
    done = mcpmount("status", write_config(tmp_path, body), "--json")
    assert done.returncode == 1
    rows = {row["server"]: row for row in json.loads(done.stdout)}
    assert rows["good"]["state"] == "ready"
    assert isinstance(rows["good"]["pid"], int)
    assert rows["bad"]["state"] == "failed"
    assert "exited with code 1" in rows["bad"]["error"]
