"""``--json`` on every command, failures included: a script reads one JSON object on stdout
(``code``, ``message``, ``server``, ``hint``) and never a line of text there; ``serve``'s
own lines are JSON lines on stderr, since its stdout is the MCP stream."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from mcpmount.cli._app import _parser  # pyright: ignore[reportPrivateUsage]
from mcpmount.cli._completion import _commands  # pyright: ignore[reportPrivateUsage]
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

FIELDS = ["code", "message", "server", "hint"]


def failure(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The one JSON object a failed ``--json`` command wrote on stdout (all of stdout)."""
    told = json.loads(done.stdout)
    assert isinstance(told, dict)
    assert sorted(told) == sorted(FIELDS), told  # pyright: ignore[reportUnknownArgumentType]
    return told  # pyright: ignore[reportUnknownVariableType]


def test_every_command_takes_json() -> None:
    commands = _commands(_parser())
    assert len(commands) > 15
    lacking = [name for name, (_, sub) in commands.items() if "--json" not in sub.format_usage()]
    assert not lacking


def test_a_usage_error_under_json_is_one_object_on_stdout() -> None:
    done = mcpmount("tools", "--json", "--bogus")
    assert done.returncode == 2
    told = failure(done)
    assert told["code"] == "usage"
    assert "--bogus" in str(told["message"])
    assert "--help" in str(told["hint"])
    plain = mcpmount("tools", "--bogus")
    assert (plain.returncode, plain.stdout) == (2, "")
    assert plain.stderr.startswith("usage: ")


def test_a_config_error_names_its_server(tmp_path: Path) -> None:
    config = write_config(tmp_path, fixture_server("one", extra='enw = { A = "b" }'))
    done = mcpmount("check", config, "--json")
    assert done.returncode == 2
    told = failure(done)
    assert (told["code"], told["server"]) == ("config", "one")
    assert "servers.one.enw" in str(told["message"])


def test_a_server_that_fails_to_mount_is_named(tmp_path: Path) -> None:
    # required: a listing command lists what mounted beside an optional server's failure
    config = write_config(
        tmp_path, fixture_server("one", "--crash-on-start", extra="required = true")
    )
    done = mcpmount("tools", config, "--json", "--live")
    assert done.returncode == 1
    told = failure(done)
    assert (told["code"], told["server"]) == ("mount", "one")
    assert "check" in str(told["hint"])


def test_an_unknown_tool_suggests_the_near_name(tmp_path: Path) -> None:
    config = write_config(tmp_path, fixture_server("one"))
    done = mcpmount("call", "one__ech", "{}", config, "--json")
    assert done.returncode == 1, done.stderr
    told = failure(done)
    assert told["code"] == "unknown_tool"
    assert "one__echo" in str(told["hint"])


def test_arguments_that_are_not_an_object_are_a_usage_failure(tmp_path: Path) -> None:
    config = write_config(tmp_path, fixture_server("one"))
    done = mcpmount("call", "one__echo", "[1]", config, "--json")
    assert done.returncode == 2
    told = failure(done)
    assert told["code"] == "usage"
    assert "describe one__echo" in str(told["hint"])


def test_completion_under_json_is_the_script_in_an_object() -> None:
    done = mcpmount("completion", "fish", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "shell": "fish",
        "script": mcpmount("completion", "fish").stdout,
    }


def test_serves_failure_under_json_is_a_json_line_on_stderr_and_nothing_on_stdout(
    tmp_path: Path,
) -> None:
    done = mcpmount("serve", str(tmp_path / "missing.toml"), "--json")
    assert (done.returncode, done.stdout) == (2, "")
    told = json.loads(done.stderr.strip().splitlines()[-1])
    assert told["code"] == "config"
    assert sorted(told) == sorted(FIELDS)


def test_serves_own_lines_under_json_are_json_lines(tmp_path: Path) -> None:
    """HTTP ``serve --json``: the serving line is an event with its URL; stopped with
    SIGTERM, it leaves nothing that is not JSON on stderr."""
    config = write_config(tmp_path, fixture_server("one"))
    command = [sys.executable, "-m", "mcpmount", "-v", "serve", config, "--json"]
    command += ["--transport", "http", "--port", "0"]
    with subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stderr is not None
            seen = [json.loads(process.stderr.readline()) for _ in range(1)]
            for _ in range(100):  # -v: log lines come before it
                if seen[-1].get("event") == "serving":
                    break
                seen.append(json.loads(process.stderr.readline()))
            assert seen[-1]["event"] == "serving", seen
            assert str(seen[-1]["url"]).startswith("http://127.0.0.1:")
        finally:
            process.terminate()
            out, rest = process.communicate(timeout=30)
    assert out == ""
    lines = [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert all("event" in line or "code" in line for line in lines)
