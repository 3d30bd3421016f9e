"""``mcpmount tools``, ``search`` and ``call``: the mounted tools, listed, ranked and called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def test_tools_lists_public_and_raw_names(tmp_path: Path) -> None:
    """--json gives each public name with the raw name it routes to."""
    names = json.dumps(["files.read", "plain"])
    done = mcpmount(
        "tools", write_config(tmp_path, fixture_server("leg", "--names", names)), "--json"
    )
    assert done.returncode == 0, done.stderr
    rows = {row["raw_name"]: row["name"] for row in json.loads(done.stdout)}
    assert rows["plain"] == "leg__plain"
    assert rows["files.read"].startswith("leg__files_read_")


def test_server_text_with_rich_markup_is_printed_literally(tmp_path: Path) -> None:
    """A description holding `[/bold]` is data, not markup: no crash, shown as is."""
    raw = json.dumps(
        [{"name": "evil", "description": "[/bold] [red]x", "inputSchema": {"type": "object"}}]
    )
    done = mcpmount("tools", write_config(tmp_path, fixture_server("m", "--raw-tools", raw)))
    assert done.returncode == 0, done.stderr
    assert "[/bold] [red]x" in done.stdout


def test_call_prints_the_result_and_exits_by_is_error(tmp_path: Path) -> None:
    """A result exits 0; a tool error result exits 1 and is still printed."""
    config = write_config(tmp_path, fixture_server("one"))
    ok = mcpmount("call", "one__echo", '{"text": "hello there"}', config)
    assert ok.returncode == 0, ok.stderr
    assert "hello there" in ok.stdout
    failed = mcpmount("call", "one__fail", '{"message": "disk full"}', config)
    assert failed.returncode == 1
    assert "disk full" in failed.stdout


def test_call_of_an_unknown_tool_exits_1_with_suggestions(tmp_path: Path) -> None:
    """The registry's own failure is an error message naming the tool."""
    done = mcpmount("call", "one__ecko", "{}", write_config(tmp_path, fixture_server("one")))
    assert done.returncode == 1
    assert "one__echo" in done.stderr


def test_call_with_arguments_that_are_not_an_object_exits_2(tmp_path: Path) -> None:
    """Usage errors are exit 2, before any server starts."""
    done = mcpmount("call", "one__echo", "[1, 2]", write_config(tmp_path, fixture_server("one")))
    assert done.returncode == 2
    assert "JSON object" in done.stderr


def test_search_ranks_deferred_tools(tmp_path: Path) -> None:
    """`mcpmount search` finds a deferred tool by what it does."""
    config = write_config(tmp_path, fixture_server("one", extra="defer = true"))
    done = mcpmount("search", "add two numbers", config, "--json")
    assert done.returncode == 0, done.stderr
    hits = [hit["name"] for hit in json.loads(done.stdout)["hits"]]
    assert hits[0] == "one__add"
