"""Each host's file read as its host means it: VS Code's ``servers`` and ``inputs``, Cursor's
``${env:X}``, ``envFile``, ``autoApprove``; and the hosts' syntax mcpmount cannot follow,
refused with how to write it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from config_support import Write, http, problems_of, stdio

from mcpmount.config import HostInput, load_config

VSCODE = {
    "inputs": [
        {
            "type": "promptString",
            "id": "github-token",
            "description": "GitHub Personal Access Token",
            "password": True,
        }
    ],
    "servers": {
        "github": {
            "type": "stdio",
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/server"],
            "env": {"GITHUB_TOKEN": "${input:github-token}"},
        },
        "files": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}"],
        },
        "remote": {"type": "http", "url": "https://api.example.com/mcp"},
        "old": {"type": "sse", "url": "https://old.example.com/sse"},
    },
}
"""A VS Code ``.vscode/mcp.json`` in the shape of code.visualstudio.com's examples."""


def vscode_file(tmp_path: Path, document: object = VSCODE) -> Path:
    path = tmp_path / "project" / ".vscode" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document, indent=2))
    return path


def test_a_vscode_file_loads_its_servers_inputs_and_workspace_folder(tmp_path: Path) -> None:
    """``servers`` is read; ``${input:id}`` is answered by MCPMOUNT_INPUT_<ID>;
    ``${workspaceFolder}`` is the folder holding ``.vscode/``; each ``type`` is honoured."""
    path = vscode_file(tmp_path)
    environ = {"MCPMOUNT_INPUT_GITHUB_TOKEN": "ghp_fromtheenvironment1"}
    config = load_config(path, environ=environ)
    assert list(config.servers) == ["github", "files", "remote", "old"]
    assert stdio(config, "github").env_values() == {"GITHUB_TOKEN": "ghp_fromtheenvironment1"}
    assert stdio(config, "files").args[-1] == str(tmp_path / "project")
    assert (http(config, "remote").transport, http(config, "old").transport) == ("http", "sse")
    # The answer is a secret: hidden in the spec's repr and in anything it redacts.
    assert "ghp_fromtheenvironment1" not in repr(config.servers["github"])


def test_an_input_is_asked_once_through_the_asker_with_its_description(tmp_path: Path) -> None:
    """With no variable set, the caller's asker is asked, once per input, given the
    input's description and its password flag."""
    document = json.loads(json.dumps(VSCODE))
    document["servers"]["files"]["env"] = {"TOKEN_AGAIN": "${input:github-token}"}
    asked: list[HostInput] = []

    def ask(wanted: HostInput) -> str:
        asked.append(wanted)
        return "typed-at-the-prompt"

    config = load_config(vscode_file(tmp_path, document), environ={}, ask=ask)
    assert [(a.id, a.description, a.password) for a in asked] == [
        ("github-token", "GitHub Personal Access Token", True)
    ]
    assert stdio(config, "files").env_values() == {"TOKEN_AGAIN": "typed-at-the-prompt"}


def test_an_input_nobody_can_answer_names_the_input_and_the_variable_to_set(
    tmp_path: Path,
) -> None:
    """Where nobody can be asked (``serve``, no terminal), the error says which variable."""
    assert problems_of(vscode_file(tmp_path)) == (
        'servers.github.env.GITHUB_TOKEN: ${input:github-token} ("GitHub Personal Access '
        'Token") must be answered and nobody can be asked here; set MCPMOUNT_INPUT_GITHUB_TOKEN',
    )


def test_an_input_with_a_default_takes_it_when_nobody_is_asked(tmp_path: Path) -> None:
    """A ``default`` answers an input nobody can be asked for."""
    document = {
        "inputs": [{"type": "promptString", "id": "region", "default": "eu-west-1"}],
        "servers": {"aws": {"type": "stdio", "command": "srv", "args": ["${input:region}"]}},
    }
    config = load_config(vscode_file(tmp_path, document), environ={})
    assert stdio(config, "aws").args == ["eu-west-1"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            "${input:api-key}",
            '${input:api-key} names no input: declare it in the file\'s "inputs" (VS Code: '
            '{"id": "api-key", "type": "promptString"}) or set MCPMOUNT_INPUT_API_KEY',
        ),
        (
            "${command:extension.pickToken}",
            "${command:extension.pickToken} runs an editor command (VS Code's syntax), which "
            "mcpmount cannot do; write the value itself, ${env:NAME} for a variable of the "
            "environment, or ${input:id} for one to ask",
        ),
        ("${config:http.proxy}", "${config:http.proxy} reads an editor setting (VS Code's"),
        ("${file}", "${file} is VS Code's name for the editor's state"),
        ("${env:NOT_SET_HERE}", "environment variable NOT_SET_HERE is not set"),
    ],
)
def test_host_syntax_mcpmount_cannot_follow_says_whose_it_is_and_what_to_write(
    write: Write, value: str, problem: str
) -> None:
    """Each error names the host whose syntax it is and the way to write the value here."""
    path = write("mcp.json", json.dumps({"mcpServers": {"x": {"command": "a", "args": [value]}}}))
    (found,) = problems_of(path)
    assert found.startswith(f"mcpServers.x.args[0]: {problem}")


def test_a_cursor_file_expands_env_user_home_and_workspace_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cursor's ``${env:X}``, ``${userHome}`` and ``${workspaceFolder}`` (the folder holding
    ``.cursor/``) expand in command, args, env, url and headers."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    path = tmp_path / "app" / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "local": {
                        "command": "${userHome}/.local/bin/server",
                        "args": [
                            "--root",
                            "${workspaceFolder}",
                            "--name",
                            "${workspaceFolderBasename}",
                        ],
                        "env": {"API_KEY": "${env:MY_KEY}"},
                    },
                    "remote": {
                        "url": "https://${env:API_HOST}/mcp",
                        "headers": {"Authorization": "Bearer ${env:MY_KEY}"},
                    },
                }
            }
        )
    )
    environ = {"MY_KEY": "sk-cursor-key-123", "API_HOST": "api.example.com"}
    config = load_config(path, environ=environ)
    local = stdio(config, "local")
    assert local.command == f"{home}/.local/bin/server"
    assert local.args == ["--root", str(tmp_path / "app"), "--name", "app"]
    assert local.env_values() == {"API_KEY": "sk-cursor-key-123"}
    remote = http(config, "remote")
    assert (remote.url, remote.header_values()) == (
        "https://api.example.com/mcp",
        {"Authorization": "Bearer sk-cursor-key-123"},
    )


def test_a_hosts_variable_in_toml_says_how_to_write_it_there(write: Write) -> None:
    """Our TOML has no ``${env:X}``: the error says to write ``${X}``."""
    path = write("servers.toml", '[servers.x]\ncommand = "a"\nargs = ["${env:TOKEN}"]\n')
    assert problems_of(path, {"TOKEN": "t"}) == (
        "servers.x.args[0]: ${env:TOKEN} is how VS Code and Cursor write a variable; in a TOML "
        "config write ${TOKEN}",
    )


def test_an_env_file_is_read_relative_to_the_config_with_env_winning(write: Write) -> None:
    """``envFile`` is a dotenv file (comments, ``export``, quotes) beside the config; its
    values are literal; ``env`` wins over it."""
    write(
        "secrets.env",
        """
        # the team's settings
        export REGION=eu-west-1
        TOKEN="a \\"quoted\\" $token"
        LITERAL='single $quoted # not a comment'
        BARE=bare value # a comment
        SHADOWED=from-the-file
        """,
    )
    path = write(
        "mcp.json",
        '{"mcpServers": {"api": {"command": "srv", "envFile": "secrets.env", '
        '"env": {"SHADOWED": "from-env"}}}}',
    )
    assert stdio(load_config(path, environ={}), "api").env_values() == {
        "REGION": "eu-west-1",
        "TOKEN": 'a "quoted" $token',
        "LITERAL": "single $quoted # not a comment",
        "BARE": "bare value",
        "SHADOWED": "from-env",
    }


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('"envFile": "missing.env"', "mcpServers.api.envFile: {dir}/missing.env not found"),
        ('"envFile": "bad.env"', "mcpServers.api.envFile: {dir}/bad.env line 2: not KEY=VALUE"),
    ],
)
def test_a_missing_or_broken_env_file_names_the_file_and_line(
    write: Write, entry: str, problem: str
) -> None:
    """A line is named by its number, never shown (it may hold a secret)."""
    write("bad.env", "GOOD=1\nthis is a s3cret line\n")
    path = write("mcp.json", f'{{"mcpServers": {{"api": {{"command": "srv", {entry}}}}}}}')
    (found,) = problems_of(path)
    assert found == problem.format(dir=path.parent)
    assert "s3cret" not in found


def test_auto_approve_becomes_an_exemption_and_says_when_there_is_no_gate(
    write: Write,
) -> None:
    """``autoApprove`` and ``alwaysAllow`` are our ``auto_approve``; with no approval gate
    configured a note says it changes nothing, and with one it says nothing."""
    path = write(
        "mcp.json",
        '{"mcpServers": {"fs": {"command": "a", "autoApprove": ["read_file"], '
        '"alwaysAllow": ["list_directory", "read_file"]}}}',
    )
    idle = load_config(path, environ={})
    assert stdio(idle, "fs").auto_approve == ["read_file", "list_directory"]
    (note,) = idle.notes
    assert note.startswith("mcpServers.fs: autoApprove and alwaysAllow change nothing")
    gated = load_config(path, environ={"MCPMOUNT_APPROVAL": "all"})
    assert gated.notes == ()
