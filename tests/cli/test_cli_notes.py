"""``mcpmount check`` and ``status`` name what a mounted server lists or is configured
with that is not mounted: a tool callable only as a task, an override of a missing tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import mcpmount, server, write_config

pytestmark = pytest.mark.usefixtures("no_leaks")

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


def test_check_notes_a_task_only_tool_and_an_override_of_a_missing_tool(tmp_path: Path) -> None:
    """The server mounts (exit 0); the notes are on stderr under the table, and in JSON."""
    config = write_config(tmp_path, server("t", "--raw-tools", TOOLS, extra=EXTRA))
    done = mcpmount("check", config)
    assert done.returncode == 0, done.stderr
    assert "t: tool 'needs_task' not mounted: callable only as a task (taskSupport required)" in (
        " ".join(done.stderr.split())
    )
    assert "t: overrides name tools that are not mounted: 'gone'" in done.stderr
    report = json.loads(mcpmount("check", config, "--json").stdout)
    [row] = report["servers"]
    assert row["tools"] == 1
    assert len(row["notes"]) == 2
    status = json.loads(mcpmount("status", config, "--json").stdout)
    assert status[0]["notes"] == row["notes"]


@pytest.mark.parametrize(
    "args", [["check"], ["tools", "--live"], ["call", "t__plain"]], ids=lambda a: a[0]
)
def test_tools_callable_only_as_tasks_are_named_once_in_one_line(
    tmp_path: Path, args: list[str]
) -> None:
    """Three task-only tools: one line naming the three, not a warning for each and a note."""
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
        server("t", "--raw-tools", json.dumps([*tasks, plain]), extra='protocol = "legacy"'),
    )
    done = mcpmount(*args, config)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert said.count("task_0") == 1, done.stderr
    assert "t: tools 'task_0', 'task_1', 'task_2' not mounted: callable only as a task" in said
