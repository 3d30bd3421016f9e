"""Hosts' own files through the command line, as a user runs it: a VS Code file with its
inputs asked on a terminal, ``disabled`` and ``autoApprove`` shown, a transport mismatch
explained, and ``check --from HOST`` reading each host's files from a temporary HOME."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.cli_support import Remotes, environment, mcpmount, write_json
from support import FIXTURE, SERVERS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

ENV_SERVER = SERVERS / "env_server.py"
TOKEN = "ghp_typed-or-set-token-4242"


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Path:
    """A project folder with the env server in it, and a VS Code file that runs it with an
    input, an envFile and ``${workspaceFolder}`` (as code.visualstudio.com shows them)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ENV_SERVER, project / "server.py")
    (project / ".env").write_text("# shared settings\nREGION='eu-west-1'\n")
    write_json(
        project / ".vscode" / "mcp.json",
        {
            "inputs": [
                {
                    "type": "promptString",
                    "id": "api-token",
                    "description": "Service API token",
                    "password": True,
                }
            ],
            "servers": {
                "svc": {
                    "type": "stdio",
                    "command": sys.executable,
                    "args": ["${workspaceFolder}/server.py"],
                    "env": {"TOKEN": "${input:api-token}"},
                    "envFile": "${workspaceFolder}/.env",
                }
            },
        },
    )
    return project


def test_a_vscode_file_runs_with_its_input_env_file_and_workspace_folder(
    project: Path, tmp_path: Path
) -> None:
    """The server is found through ``${workspaceFolder}`` and gets the input's answer (from
    MCPMOUNT_INPUT_API_TOKEN) and the envFile's variables."""
    env = environment(tmp_path, MCPMOUNT_INPUT_API_TOKEN=TOKEN)
    config = str(project / ".vscode" / "mcp.json")
    token = mcpmount("call", "svc__reversed_env", '{"name": "TOKEN"}', config, env=env)
    assert (token.returncode, token.stdout.strip()) == (0, TOKEN[::-1]), token.stderr
    shown = mcpmount("call", "svc__env", '{"name": "TOKEN"}', config, env=env)
    assert shown.stdout.strip() == "[redacted: secret of server 'svc']"  # an input is a secret
    region = mcpmount("call", "svc__reversed_env", '{"name": "REGION"}', config, env=env)
    assert (region.returncode, region.stdout.strip()) == (0, "eu-west-1"[::-1]), region.stderr


def test_an_input_nobody_can_be_asked_for_exits_2_naming_the_variable(
    project: Path, tmp_path: Path
) -> None:
    """Without a terminal (as under ``serve``), the input is an error naming what to set."""
    done = mcpmount("check", str(project / ".vscode" / "mcp.json"), env=environment(tmp_path))
    assert done.returncode == 2
    assert "${input:api-token}" in done.stderr
    assert "MCPMOUNT_INPUT_API_TOKEN" in done.stderr


def read_until(leader: int, wanted: bytes, seen: bytearray) -> None:
    """Read the terminal into ``seen`` until ``wanted`` shows (within 60 s)."""
    while wanted not in seen:
        ready, _, _ = select.select([leader], [], [], 60)
        assert ready, f"never saw {wanted!r}: {bytes(seen)!r}"
        seen += os.read(leader, 65536)


def drain(leader: int, seen: bytearray) -> None:
    """Read the terminal into ``seen`` until every writer closed it."""
    while select.select([leader], [], [], 60)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process ended
            return
        if not chunk:
            return
        seen += chunk


def test_an_input_is_asked_on_the_terminal_without_echo(project: Path, tmp_path: Path) -> None:
    """On a terminal the input's description is shown, the password typed unseen, and the
    answer reaches the server."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "mcpmount", "call", "svc__reversed_env", '{"name": "TOKEN"}']
    process = subprocess.Popen(
        [*command, str(project / ".vscode" / "mcp.json")],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=environment(tmp_path),
        start_new_session=True,
    )
    os.close(follower)
    seen = bytearray()
    try:
        read_until(leader, b"Service API token (${input:api-token}): ", seen)
        os.write(leader, TOKEN.encode() + b"\n")
        drain(leader, seen)
        assert process.wait(60) == 0, bytes(seen)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait()
    # The tool's answer (backwards: the token itself would be redacted). Never echoed.
    assert bytes(seen).count(TOKEN[::-1].encode()) == 1, bytes(seen)
    assert TOKEN.encode() not in bytes(seen)


def fixture_entry(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [FIXTURE], **extra}


def test_check_names_a_disabled_server_and_an_auto_approve_with_no_gate(tmp_path: Path) -> None:
    """Neither is silent: ``check`` notes both, on stderr and in ``--json``."""
    config = write_json(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "fx": fixture_entry(autoApprove=["echo"]),
                "later": fixture_entry(disabled=True),
            }
        },
    )
    done = mcpmount("check", str(config), env=environment(tmp_path))
    assert done.returncode == 0, done.stderr
    assert 'mcpServers.later: not mounted: the file disables it ("disabled": true)' in done.stderr
    assert "mcpServers.fx: autoApprove changes nothing: no approval gate" in " ".join(
        done.stderr.split()
    )
    report = json.loads(mcpmount("check", "--json", str(config), env=environment(tmp_path)).stdout)
    assert [row["server"] for row in report["servers"]] == ["fx"]
    assert len(report["notes"]) == 2


def test_auto_approve_lets_its_tools_skip_the_approval_gate(tmp_path: Path) -> None:
    """Under ``MCPMOUNT_APPROVAL=all``, the autoApprove tools are not gated and run; the
    others wait for an approver the command line does not have, and are denied."""
    config = str(
        write_json(
            tmp_path / "mcp.json", {"mcpServers": {"fx": fixture_entry(autoApprove=["echo"])}}
        )
    )
    env = environment(tmp_path, MCPMOUNT_APPROVAL="all")
    listed = mcpmount("tools", "--json", config, env=env)
    gated = {row["name"]: row["approval"] for row in json.loads(listed.stdout)}
    assert (gated["fx__echo"], gated["fx__add"]) == (False, True)
    echoed = mcpmount("call", "fx__echo", '{"text": "hi"}', config, env=env)
    assert (echoed.returncode, echoed.stdout.strip()) == (0, "hi"), echoed.stderr
    added = mcpmount("call", "fx__add", '{"a": 1, "b": 2}', config, env=env)
    assert added.returncode == 1
    assert "no approver is configured" in added.stderr


@pytest.fixture(name="wrong_transports")
def _wrong_transports(tmp_path: Path, remotes: Remotes) -> Path:
    """A host file naming a streamable HTTP server "sse" and an SSE server "http"."""
    return write_json(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "said-sse": {"type": "sse", "url": remotes.http},
                "said-http": {"type": "http", "url": remotes.sse},
            }
        },
    )


def test_a_server_of_the_other_http_transport_is_explained(
    wrong_transports: Path, tmp_path: Path
) -> None:
    """Not a bare HTTP 400 or 405: the error says to set transport "auto" or the other."""
    done = mcpmount("check", "--json", str(wrong_transports), env=environment(tmp_path))
    errors = {row["server"]: row["error"] for row in json.loads(done.stdout)["servers"]}
    assert errors["said-sse"].startswith("HTTP 400 from http://127.0.0.1:")
    assert errors["said-sse"].endswith(
        'it may speak streamable HTTP, not legacy HTTP+SSE; set transport = "auto" to find '
        'out, or "http" ("type": "http" in a host file)'
    )
    assert errors["said-http"].startswith("HTTP 405 from http://127.0.0.1:")
    assert (
        'it may speak legacy HTTP+SSE, not streamable HTTP; set transport = "auto"'
        in (errors["said-http"])
    )


HOST_FILES: dict[str, dict[str, object]] = {
    # Each host's files, where its documentation puts them (Linux), in its own shape.
    "claude-desktop": {
        ".config/Claude/claude_desktop_config.json": {
            "globalShortcut": "Ctrl+Space",
            "mcpServers": {"desktop": fixture_entry()},
        }
    },
    "claude-code": {
        ".claude.json": {
            "numStartups": 12,
            "mcpServers": {"user-wide": fixture_entry(), "shared": fixture_entry()},
            "projects": {
                "{project}": {
                    "allowedTools": [],
                    "mcpServers": {"shared": fixture_entry(type="stdio")},
                }
            },
        },
        "{project}/.mcp.json": {"mcpServers": {"team": fixture_entry(type="stdio")}},
    },
    "cursor": {
        ".cursor/mcp.json": {"mcpServers": {"global": fixture_entry()}},
        "{project}/.cursor/mcp.json": {
            "mcpServers": {"here": fixture_entry(args=["${workspaceFolder}/../fixture.py"])}
        },
    },
    "vscode": {
        ".config/Code/User/mcp.json": {"servers": {"profile": fixture_entry(type="stdio")}},
        "{project}/.vscode/mcp.json": {
            "inputs": [],
            "servers": {"workspace": fixture_entry(type="stdio")},
        },
    },
}

EXPECTED = {
    "claude-desktop": ["desktop"],
    "claude-code": ["user-wide", "shared", "team"],
    "cursor": ["global", "here"],
    "vscode": ["profile", "workspace"],
}


@pytest.mark.parametrize("host", list(HOST_FILES))
def test_check_from_a_host_reads_its_files_from_home_and_project(host: str, tmp_path: Path) -> None:
    """Every file the host reads is read (user, project, Claude Code's local scope), and a
    name two of them declare is the one the host prefers."""
    home, project = tmp_path / "home", tmp_path / "work" / "app"
    project.mkdir(parents=True)
    shutil.copy(FIXTURE, tmp_path / "work" / "fixture.py")
    for where, document in HOST_FILES[host].items():
        text = json.dumps(document).replace("{project}", str(project))
        path = Path(where.replace("{project}", str(project)))
        write_json(path if path.is_absolute() else home / path, json.loads(text))
    done = mcpmount("check", "--json", "--from", host, env=environment(home), cwd=project)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [row["server"] for row in report["servers"]] == EXPECTED[host]
    if host == "claude-code":  # the project's local scope wins over the user's
        assert any("shared: the one of" in note and "(local)" in note for note in report["notes"])


def test_check_from_a_host_without_files_exits_2_saying_where_it_looked(tmp_path: Path) -> None:
    """A host that has never been configured here is a usage error naming its paths."""
    done = mcpmount("check", "--from", "cursor", env=environment(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert "no config file of Cursor found" in done.stderr
    assert str(tmp_path / ".cursor" / "mcp.json") in "".join(done.stderr.split())  # unwrapped


def test_check_reads_a_hosts_file_with_comments_and_trailing_commas(tmp_path: Path) -> None:
    """Cursor's and VS Code's files are JSONC: ``check`` reads a commented one from its path
    and with ``--from``, its servers as the host sees them, its ``//`` URLs intact."""
    home, project = tmp_path / "home", tmp_path / "app"
    project.mkdir()
    entry = json.dumps(fixture_entry(args=[FIXTURE, "--name", "http://not/a/comment"]))
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(f'{{\n  // mine\n  "mcpServers": {{\n    "jsonc": {entry}, /* a */\n  }},\n}}')
    for args in (["--from", "cursor"], [str(path)]):
        done = mcpmount("check", "--json", *args, env=environment(home), cwd=project)
        assert done.returncode == 0, done.stderr
        assert [row["server"] for row in json.loads(done.stdout)["servers"]] == ["jsonc"]
