"""``mcpmount prompts``, ``resources``, ``read`` and ``prompt``: beyond tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import SERVERS, script_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def content(name: str, *flags: str) -> str:
    """A config table for the content server, mounted as ``name``."""
    return script_server(name, str(SERVERS / "content_server.py"), "--label", name, *flags)


def test_prompts_and_resources_list_public_names_and_registry_uris(tmp_path: Path) -> None:
    """Two servers with the same URIs: each listed under its own prefix."""
    config = write_config(tmp_path, content("a") + content("b"))
    prompts = mcpmount("prompts", config, "--json")
    assert prompts.returncode == 0, prompts.stderr
    assert [p["name"] for p in json.loads(prompts.stdout)] == ["a__greet", "b__greet"]
    listed = mcpmount("resources", config, "--json")
    assert listed.returncode == 0, listed.stderr
    body = json.loads(listed.stdout)
    assert "mcpmount://b/file:///shared.txt" in [r["uri"] for r in body["resources"]]
    assert [t["uriTemplate"] for t in body["templates"]] == [
        "mcpmount://a/memo://items/{item}",
        "mcpmount://b/memo://items/{item}",
    ]
    table = mcpmount("resources", config)
    assert table.returncode == 0, table.stderr
    assert "2 templates" in table.stdout


def test_read_prints_the_contents_of_a_registry_uri(tmp_path: Path) -> None:
    """`read URI CONFIG` routes to the server in the URI; an unknown prefix exits 1."""
    config = write_config(tmp_path, content("a") + content("b"))
    done = mcpmount("read", "mcpmount://b/file:///shared.txt", config)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "shared by b"
    expanded = mcpmount("read", "mcpmount://a/memo://items/fig", config, "--json")
    assert json.loads(expanded.stdout)["contents"][0]["text"] == "item:fig"
    unknown = mcpmount("read", "mcpmount://zz/memo://one", config)
    assert unknown.returncode == 1
    assert "no mounted server" in unknown.stderr


def test_prompt_prints_its_messages_and_checks_its_arguments(tmp_path: Path) -> None:
    """`prompt NAME JSON CONFIG`; arguments that are not strings are a usage error (2)."""
    config = write_config(tmp_path, content("a"))
    done = mcpmount("prompt", "a__greet", '{"name": "Ada"}', config)
    assert done.returncode == 0, done.stderr
    assert "user: Hello, Ada." in done.stdout
    assert "mcpmount://a/memo://one" in done.stdout
    bad = mcpmount("prompt", "a__greet", '{"name": 1}', config)
    assert bad.returncode == 2
    assert "strings" in bad.stderr
    missing = mcpmount("prompt", "a__greet", config)  # no arguments: the server refuses
    assert missing.returncode == 1
    assert "prompt 'a__greet'" in missing.stderr


def test_lock_pins_prompts_and_resources(tmp_path: Path) -> None:
    """`mcpmount lock` pins them; a prompt changed since then fails the next command."""
    config = write_config(tmp_path, content("a"))
    locked = mcpmount("lock", config)
    assert locked.returncode == 0, locked.stderr
    assert "1 prompt and 3 resource definitions pinned" in locked.stdout
    lock = json.loads((tmp_path / "mcpmount.lock").read_text())
    assert set(lock["prompts"]["a"]) == {"greet"}
    assert set(lock["templates"]["a"]) == {"memo://items/{item}"}
    changed = content("a", "--greet-description", "Something else.")
    write_config(tmp_path, changed + "required = true\n")  # else listed as not mounted
    refused = mcpmount("prompts", config)
    assert refused.returncode == 1
    assert "prompts differ from the lock file" in refused.stderr
