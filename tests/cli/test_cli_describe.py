"""A tool's arguments, visible: input schemas in ``tools --json``, ``describe NAME``'s
table, and a call whose arguments are JSON but not an object told so (never taken for a
config file)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import FIXTURE, fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

TAGS = {"type": "array", "items": {"type": "string"}}
SCHEMA = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "description": "an ISO date"},
        "zone": {"type": ["string", "null"]},
        "unit": {"enum": ["s", "ms"], "description": "seconds or milliseconds"},
        "tags": TAGS,
        "bad\x1b[2J": {"type": "integer", "description": "rings\x07 the bell"},
    },
    "required": ["when", "bad\x1b[2J"],
}
"""A raw server's ``clock`` tool takes these; one argument's name hides a screen clear
(the registry strips it from what it lists; ``describe`` would show it as an escape)."""


def clock(tmp_path: Path) -> str:
    listing = json.dumps({"tools": [{"name": "clock", "inputSchema": SCHEMA}]})
    args = json.dumps([FIXTURE, "--raw", "--list-json", listing])
    return write_config(
        tmp_path,
        fixture_server("one") + f'[servers.t]\ncommand = "{sys.executable}"\nargs = {args}\n',
    )


def test_tools_json_carries_each_tools_input_schema(tmp_path: Path) -> None:
    done = mcpmount("tools", clock(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    schemas = {row["name"]: row["input_schema"] for row in json.loads(done.stdout)}
    assert schemas["t__clock"]["properties"]["tags"] == TAGS
    assert schemas["t__clock"]["required"] == ["when", "bad[2J"]  # the registry strips ESC
    assert schemas["one__add"]["required"] == ["a", "b"]


def test_describe_shows_a_table_of_the_arguments(tmp_path: Path) -> None:
    """Name, type, required and description of each argument; a server's control
    characters shown as escapes, never sent."""
    config = clock(tmp_path)
    done = mcpmount("describe", "t__clock", config)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "\x07" not in done.stdout
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if "│" in line}
    assert rows.keys() == {"when", "zone", "unit", "tags", "bad[2J"}
    assert [cell.strip() for cell in rows["when"].split("│")[1:5]] == [
        "when",
        "string",
        "yes",
        "an ISO date",
    ]
    assert "string | null" in rows["zone"]
    assert 'one of: "s", "ms"' in rows["unit"]
    assert "array of string" in rows["tags"]
    assert "yes" in rows["bad[2J"]


def test_describe_shows_the_description_json_and_what_an_unknown_name_may_be(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, fixture_server("one"))
    added = mcpmount("describe", "one__add", config)
    assert "Add two integers." in added.stdout
    assert json.loads(mcpmount("describe", "one__add", config, "--json").stdout)["name"] == "add"
    unknown = mcpmount("describe", "one__ad", config)
    assert unknown.returncode == 1
    assert "one__add" in unknown.stderr


def test_call_with_a_json_array_is_told_arguments_are_an_object(tmp_path: Path) -> None:
    """With the config found in the current folder, ``'["UTC"]'`` is arguments of the
    wrong shape, not a config path: exit 2, nothing started, the way to see the
    arguments named."""
    marker = tmp_path / "one.pid"
    write_config(tmp_path, fixture_server("one", "--pidfile", str(marker)))
    done = mcpmount("call", "one__echo", '["UTC"]', cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "must be a JSON object of named arguments, not an array" in done.stderr
    assert "mcpmount describe one__echo" in done.stderr
    assert "file not found" not in done.stderr
    assert not marker.exists()
    named = mcpmount("call", "one__echo", '{"text": "UTC"}', cwd=tmp_path)
    assert (named.returncode, named.stdout) == (0, "UTC\n"), named.stderr


def test_call_with_the_config_first_is_told_the_order(tmp_path: Path) -> None:
    """``call CONFIG NAME`` (the config where the name goes) is a usage error that shows the
    command in its order, not a config problem about a file named like the tool."""
    marker = tmp_path / "one.pid"
    config = write_config(tmp_path, fixture_server("one", "--pidfile", str(marker)))
    done = mcpmount("call", str(config), "one__echo")
    assert done.returncode == 2, done.stderr
    assert f"the name comes first: mcpmount call one__echo [ARGUMENTS] {config}" in done.stderr
    assert "file not found" not in done.stderr
    assert not marker.exists()
