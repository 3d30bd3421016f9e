"""``mcpmount adopt HOST`` and ``mcpmount uninstall HOST``, run as a user runs them: the
host's servers move into an mcpmount config with no secret printed or written there; the
entry that replaces them serves them, with their secrets, started as the host starts it;
and ``uninstall`` puts the file back byte for byte, or, if it changed since, takes out
only mcpmount's entry and says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types
import pytest
from host_files import entry_of, user_env
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.cli_support import mcpmount
from serve.serve_support import connected, wait_for_tool

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(120)]

SECRET = "sk-planted-0f3c9a7e51"
HEADER_SECRET = "ghp_plantedHeaderToken77"
ENV_SERVER = str(Path(__file__).parents[1] / "servers" / "env_server.py")
DESKTOP = Path(".config/Claude/claude_desktop_config.json")
VSCODE = Path(".config/Code/User/mcp.json")

VSCODE_FILE = f"""\
{{
  // Team servers.
  "inputs": [
    {{ "type": "promptString", "id": "gh", "description": "GitHub token", "password": true }},
  ],
  "servers": {{
    "github": {{
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {{ "Authorization": "Bearer {HEADER_SECRET}" }}, // planted
    }},
    "vault": {{
      "type": "stdio",
      "command": {json.dumps(sys.executable)},
      "args": [{json.dumps(ENV_SERVER)}],
      "env": {{ "API_KEY": "{SECRET}", "ASKED": "${{input:gh}}" }},
    }},
    /* off for now */
    "old": {{ "command": "npx", "args": ["-y", "old-server"], "disabled": true }},
  }},
}}
"""

DESKTOP_FILE = json.dumps(
    {
        "mcpServers": {
            "vault": {"command": sys.executable, "args": [ENV_SERVER], "env": {"API_KEY": SECRET}}
        },
        "preferences": {"menuBarEnabled": False},
    },
    indent=2,
)


def home_with(tmp_path: Path, file: Path, text: str) -> Path:
    home = tmp_path / "home"
    (home / file).parent.mkdir(parents=True)
    (home / file).write_bytes(text.encode())
    return home


def run(home: Path, *args: str) -> tuple[int, str]:
    done = mcpmount(*args, env=user_env(home), cwd=home)
    return done.returncode, done.stdout + done.stderr


def test_adopt_then_uninstall_puts_the_file_back_byte_for_byte(tmp_path: Path) -> None:
    """VS Code's file with comments, an input, a remote server with a planted token and a
    disabled one: the two servers move, the disabled one stays, nothing secret is printed
    or written into the config, and uninstall restores every byte."""
    home = home_with(tmp_path, VSCODE, VSCODE_FILE)
    path = home / VSCODE
    original = path.read_bytes()
    code, said = run(home, "adopt", "vscode", "--dry-run")
    assert code == 0, said
    assert path.read_bytes() == original
    assert not (home / ".config" / "mcpmount" / "vscode.toml").exists()

    code, said = run(home, "adopt", "vscode")
    assert code == 0, said
    config = home / ".config" / "mcpmount" / "vscode.toml"
    for secret in (SECRET, HEADER_SECRET):
        assert secret not in said
        assert secret not in config.read_text()
    assert "github, vault" in " ".join(said.split())
    assert "old: kept in the file: the file disables it" in " ".join(said.split())
    text = path.read_text()
    assert "// Team servers." in text
    assert '"old": { "command": "npx"' in text
    entry = entry_of("vscode", home)
    assert entry["args"][-2:] == ["serve", str(config)]
    # Each secret stays where its user put it: the entry's env gives it to serve.
    assert entry["env"]["API_KEY"] == SECRET
    assert entry["env"]["ASKED"] == "${input:gh}"

    code, said = run(home, "uninstall", "vscode")
    assert code == 0, said
    assert path.read_bytes() == original
    assert "put back as it was" in " ".join(said.split())


@pytest.mark.anyio
async def test_an_adopted_server_gets_its_secret_started_as_the_host_starts_it(
    tmp_path: Path,
) -> None:
    """Claude Desktop expands nothing: the secret moves from the server's env to the
    entry's, and the server, now under serve, started bare, still has it."""
    home = home_with(tmp_path, DESKTOP, DESKTOP_FILE)
    code, said = run(home, "adopt", "claude-desktop", str(tmp_path / "adopted.toml"))
    assert code == 0, said
    assert SECRET not in said
    assert SECRET not in (tmp_path / "adopted.toml").read_text()
    entry = entry_of("claude-desktop", home)
    env = [f"{key}={value}" for key, value in entry.get("env", {}).items()]
    bare = ["-i", f"HOME={home}", "PATH=/usr/bin:/bin", *env]
    params = StdioServerParameters(
        command="/usr/bin/env", args=[*bare, entry["command"], *entry["args"]], cwd="/"
    )
    with (tmp_path / "serve.log").open("w") as errlog:
        client = Client(stdio_client(params, errlog=errlog))
        async with connected(client):
            await wait_for_tool(client, "vault__reversed_env")
            result = await client.call_tool("vault__reversed_env", {"name": "API_KEY"})
    assert isinstance(answer := result.content[0], mcp_types.TextContent)
    assert answer.text == SECRET[::-1]


def test_uninstall_after_the_file_changed_takes_out_only_the_entry(tmp_path: Path) -> None:
    """The user added a server after adopt: uninstall keeps it, takes out mcpmount's entry
    alone, and says the adopted servers are in the config."""
    home = home_with(tmp_path, DESKTOP, DESKTOP_FILE)
    path = home / DESKTOP
    code, said = run(home, "adopt", "claude-desktop")
    assert code == 0, said
    data = json.loads(path.read_text())
    data["mcpServers"]["added"] = {"command": "uvx", "args": ["added-server"]}
    path.write_text(json.dumps(data, indent=2))
    code, said = run(home, "uninstall", "claude-desktop")
    assert code == 0, said
    words = " ".join(said.split())
    assert "changed since mcpmount wrote it, so only 'mcpmount' was taken out" in words
    assert "the servers adopted are in" in words
    assert list(json.loads(path.read_text())["mcpServers"]) == ["added"]


def test_uninstall_after_install_restores_the_file_and_refuses_twice(tmp_path: Path) -> None:
    home = home_with(tmp_path, DESKTOP, DESKTOP_FILE)
    path = home / DESKTOP
    original = path.read_bytes()
    config = tmp_path / "servers.toml"
    config.write_text(f'[servers.v]\ncommand = "{sys.executable}"\nargs = ["{ENV_SERVER}"]\n')
    code, said = run(home, "install", "claude-desktop", str(config))
    assert code == 0, said
    code, said = run(home, "uninstall", "claude-desktop")
    assert (code, path.read_bytes()) == (0, original), said
    code, said = run(home, "uninstall", "claude-desktop")
    assert code == 2
    assert "no entry 'mcpmount' of mcpmount here: nothing to uninstall" in " ".join(said.split())


def test_adopt_refuses_a_file_with_nothing_to_adopt_and_an_existing_config(
    tmp_path: Path,
) -> None:
    home = home_with(tmp_path, DESKTOP, '{"mcpServers": {}}')
    code, said = run(home, "adopt", "claude-desktop")
    assert code == 2
    assert "no server to adopt in Claude Desktop's file" in " ".join(said.split())
    (home / DESKTOP).write_text(DESKTOP_FILE)
    taken = tmp_path / "taken.toml"
    taken.write_text("# mine\n")
    code, said = run(home, "adopt", "claude-desktop", str(taken))
    assert code == 2
    assert "exists already" in said
    assert taken.read_text() == "# mine\n"
    assert (home / DESKTOP).read_text() == DESKTOP_FILE


def test_install_adopt_and_uninstall_answer_json_with_no_secret(tmp_path: Path) -> None:
    """Under ``--json`` each prints one object; adopt's names the servers and variables,
    never a value."""
    home = home_with(tmp_path, DESKTOP, DESKTOP_FILE)
    config = tmp_path / "servers.toml"
    config.write_text(f'[servers.v]\ncommand = "{sys.executable}"\nargs = ["{ENV_SERVER}"]\n')
    code, said = run(home, "install", "claude-desktop", str(config), "--dry-run", "--json")
    assert code == 0, said
    answer = json.loads(said)
    assert (answer["changed"], answer["written"]) == (True, False)
    assert '+    "mcpmount": {' in answer["diff"]
    code, said = run(home, "adopt", "claude-desktop", "--json")
    assert code == 0, said
    assert SECRET not in said
    answer = json.loads(said)
    assert (answer["moved"], answer["variables"], answer["written"]) == (
        ["vault"],
        ["API_KEY"],
        True,
    )
    code, said = run(home, "uninstall", "claude-desktop", "--json")
    assert code == 0, said
    assert json.loads(said)["restored_from"] == answer["backup"]
    assert (home / DESKTOP).read_text() == DESKTOP_FILE
    (tmp_path / "x.toml").write_text("# taken\n")
    code, said = run(home, "adopt", "claude-desktop", str(tmp_path / "x.toml"), "--json")
    assert code == 2
    failure = json.loads(said)
    assert "exists already" in failure["message"]
