"""``mcpmount check`` and ``status`` name what a mounted server is configured with that
is not mounted (an override of a missing tool); a tool callable only as a task is mounted
like any other, with no note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

TOOLS = json.dumps(
    [
        {
            "name": "needs_task",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
        },
        {"name": "plain", "inputSchema": {"type": "object"}},
    ]
)
EXTRA = 'protocol = "legacy"\n[servers.t.overrides.gone]\ntitle = "Gone"\n'


def test_check_notes_an_override_of_a_missing_tool_and_mounts_a_task_only_one(
    tmp_path: Path,
) -> None:
    """The server mounts (exit 0) with both tools; the note is on stderr under the table,
    and in JSON."""
    config = write_config(tmp_path, fixture_server("t", "--raw-tools", TOOLS, extra=EXTRA))
    done = mcpmount("check", config)
    assert done.returncode == 0, done.stderr
    assert "task" not in done.stderr, done.stderr
    assert "t: overrides name tools that are not mounted: 'gone'" in done.stderr
    report = json.loads(mcpmount("check", config, "--json").stdout)
    [row] = report["servers"]
    assert row["tools"] == 2
    assert len(row["notes"]) == 1
    status = json.loads(mcpmount("status", config, "--json").stdout)
    assert status[0]["notes"] == row["notes"]


@pytest.mark.parametrize(
    "args", [["check"], ["tools", "--live"], ["call", "t__plain"]], ids=lambda a: a[0]
)
def test_tools_callable_only_as_tasks_are_mounted_without_a_word(
    tmp_path: Path, args: list[str]
) -> None:
    """Three task-only tools: mounted, and neither a warning nor a note about them."""
    tasks = [
        {
            "name": f"task_{n}",
            "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
        }
        for n in range(3)
    ]
    plain = {"name": "plain", "inputSchema": {"type": "object"}}
    config = write_config(
        tmp_path,
        fixture_server(
            "t", "--raw-tools", json.dumps([*tasks, plain]), extra='protocol = "legacy"'
        ),
    )
    done = mcpmount(*args, config)
    assert done.returncode == 0, done.stderr
    assert "task_0" not in done.stderr, done.stderr
    if args[0] == "tools":
        assert "t__task_2" in done.stdout
