"""``mcpmount install HOST CONFIG``, run as a user runs it, into host files in a temporary
HOME and project: the entry each host needs, every other key kept, a backup, idempotence,
``--dry-run``, and an entry the host can really start."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.cli_support import mcpmount
from serve.serve_support import connected, wait_for_tool
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

CONFIG_BODY = (
    fixture_server("fx") + 'env = { API_TOKEN = "${API_TOKEN}", LEVEL = "${LEVEL:-info}" }\n'
)
"""A config that needs ``API_TOKEN`` from its environment, and may have ``LEVEL``."""

SECRET = "tok-from-this-shell-4242"


@pytest.fixture(name="places")
def _places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A temporary HOME, a project folder, and a config in it."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    config = project / "mcpmount.toml"
    config.write_text(CONFIG_BODY)
    return home, project, config


def install(home: Path, project: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MCPMOUNT_"))}
    env |= {"HOME": str(home), "API_TOKEN": SECRET}
    done = mcpmount("install", *args, env=env, cwd=project)
    return done.returncode, done.stdout, " ".join(done.stderr.split())


def read(path: Path) -> Any:
    return json.loads(path.read_text())


DESKTOP = Path(".config/Claude/claude_desktop_config.json")


@pytest.mark.anyio
async def test_install_creates_the_hosts_file_with_an_entry_the_host_can_start(
    places: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Into a HOME with no Claude Desktop file: the file is created, holding one stdio
    entry of absolute paths, which started as the host starts it serves the config."""
    home, project, config = places
    code, _, said = install(home, project, "claude-desktop", str(config), "--copy-env")
    assert code == 0, said
    entry = read(home / DESKTOP)["mcpServers"]["mcpmount"]
    assert entry["args"][-2:] == ["serve", str(config)]
    assert Path(entry["command"]).is_absolute()
    assert entry["env"] == {"API_TOKEN": SECRET}  # copied, as asked, and said so
    assert "copied into" in said
    assert oct((home / DESKTOP).stat().st_mode & 0o777) == "0o600"

    # The host's environment is its own: only what the entry gives, plus where the code
    # under test is (PYTHONPATH), as the SDK's stdio client passes it.
    env = {**entry["env"], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with (tmp_path / "serve.log").open("w") as errlog:
        async with connected(Client(stdio_client(params, errlog=errlog))) as client:
            await wait_for_tool(client, "fx__echo")


def test_install_keeps_every_other_key_backs_up_and_changes_nothing_twice(
    places: tuple[Path, Path, Path],
) -> None:
    """Other servers and settings stay; the old file is kept beside it; a second run
    writes nothing and makes no second backup."""
    home, project, config = places
    path = home / DESKTOP
    path.parent.mkdir(parents=True)
    before = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"memory": {"command": "npx", "args": ["-y", "@mcp/server-memory"]}},
        "preferences": {"menuBarEnabled": False},
    }
    path.write_text(json.dumps(before, indent=4))
    original = path.read_text()
    code, _, said = install(home, project, "claude-desktop", str(config))
    assert code == 0, said
    after = read(path)
    assert {k: v for k, v in after.items() if k != "mcpServers"} == {
        "globalShortcut": "Ctrl+Space",
        "preferences": {"menuBarEnabled": False},
    }
    assert list(after["mcpServers"]) == ["memory", "mcpmount"]
    (backup,) = path.parent.glob("claude_desktop_config.json.bak-*")
    assert backup.read_text() == original
    # Claude Desktop expands no variables: nothing copied unasked, and the user is told.
    assert "env" not in after["mcpServers"]["mcpmount"]
    assert 'set API_TOKEN under "env" of "mcpmount"' in said
    assert SECRET not in path.read_text()
    written = path.read_text()
    code, _, said = install(home, project, "claude-desktop", str(config))
    assert (code, path.read_text()) == (0, written)
    assert "already installed; nothing changed" in said
    assert len(list(path.parent.glob("claude_desktop_config.json.bak-*"))) == 1


def test_an_existing_entry_is_updated_in_place_keeping_what_its_user_added(
    places: tuple[Path, Path, Path],
) -> None:
    """Its place, its other keys and the env values its user set stay; command and args
    are ours."""
    home, project, config = places
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    old = {"command": "/old/mcpmount", "args": ["serve", "/old.toml"], "env": {"API_TOKEN": "x"}}
    servers = {"first": {"url": "https://a.example/mcp"}, "mine": old | {"autoApprove": ["*"]}}
    path.write_text(json.dumps({"mcpServers": servers | {"last": {"command": "z"}}}))
    code, _, said = install(home, project, "cursor", str(config), "--name", "mine")
    assert code == 0, said
    after = read(path)["mcpServers"]
    assert list(after) == ["first", "mine", "last"]
    mine = after["mine"]
    assert mine["args"][-2:] == ["serve", str(config)]
    assert mine["autoApprove"] == ["*"]
    assert mine["env"] == {"API_TOKEN": "x", "LEVEL": "${env:LEVEL}"}


def test_dry_run_prints_the_diff_and_writes_nothing(places: tuple[Path, Path, Path]) -> None:
    """``--dry-run`` shows what would change, as a unified diff on stdout."""
    home, project, config = places
    code, out, said = install(home, project, "vscode", str(config), "--project", "--dry-run")
    assert code == 0, said
    target = project / ".vscode" / "mcp.json"
    assert out.startswith(f"--- /dev/null\n+++ {target}\n")
    assert '+  "servers": {' in out
    assert not target.exists()


@pytest.mark.parametrize(
    ("host", "flags", "file", "key", "entry_type", "token"),
    [
        ("claude-code", (), ".claude.json", "mcpServers", "stdio", "${API_TOKEN}"),
        (
            "claude-code",
            ("--project",),
            "{project}/.mcp.json",
            "mcpServers",
            "stdio",
            "${API_TOKEN}",
        ),
        (
            "cursor",
            ("--project",),
            "{project}/.cursor/mcp.json",
            "mcpServers",
            None,
            "${env:API_TOKEN}",
        ),
        ("vscode", (), ".config/Code/User/mcp.json", "servers", "stdio", "${env:API_TOKEN}"),
    ],
)
def test_each_host_gets_its_own_shape_and_its_own_syntax_for_the_environment(
    places: tuple[Path, Path, Path],
    host: str,
    flags: tuple[str, ...],
    file: str,
    key: str,
    entry_type: str | None,
    token: str,
) -> None:
    """The needed variables are passed in the host's syntax, never as their values."""
    home, project, config = places
    code, _, said = install(home, project, host, str(config), *flags)
    assert code == 0, said
    path = Path(file.replace("{project}", str(project)))
    entry = read(path if path.is_absolute() else home / path)[key]["mcpmount"]
    assert entry.get("type") == entry_type
    assert entry["env"]["API_TOKEN"] == token
    assert SECRET not in json.dumps(entry)
    assert "come from" in said


def test_install_refuses_a_file_that_is_not_json_and_leaves_it(
    places: tuple[Path, Path, Path],
) -> None:
    """A host file it cannot read is a usage error; nothing is written."""
    home, project, config = places
    path = project / ".mcp.json"
    path.write_text("{not json")
    code, _, said = install(home, project, "claude-code", str(config), "--project")
    assert code == 2
    assert str(path) in said.replace(" ", "")  # wrapped at the terminal's width
    assert "is not JSON" in said
    assert path.read_text() == "{not json"


def test_install_into_a_file_with_comments_keeps_them(places: tuple[Path, Path, Path]) -> None:
    """VS Code reads comments and trailing commas in its file: the entry goes in beside
    them, and every line of the file as it was stays."""
    home, project, config = places
    target = project / ".vscode" / "mcp.json"
    target.parent.mkdir()
    text = '{\n  // our team\'s servers\n  "servers": {},\n}\n'
    target.write_text(text)
    code, _, said = install(home, project, "vscode", str(config), "--project")
    assert code == 0, said
    after = target.read_text()
    assert after.startswith('{\n  // our team\'s servers\n  "servers": {\n    "mcpmount": {')
    assert after.endswith("  },\n}\n")
