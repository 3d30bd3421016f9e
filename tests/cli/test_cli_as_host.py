"""An installed entry, started as its host starts it: only ``HOME`` (a scratch folder) and
``PATH=/usr/bin:/bin``, in ``/``, with nothing of the shell ``install`` ran in (no active
venv on ``PATH``). The demo and a config of ``npx`` and ``uv`` servers each answer a tool
call through the SDK's client, and ``check --as-host`` says how each server did, where
``check`` in the shell sees nothing wrong."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.cli_support import mcpmount
from serve.serve_support import connected, wait_for_tool

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(180)]
"""Each test starts ``serve`` (and its servers) two or three times, on a busy machine."""

REPO = Path(__file__).parents[2]
DEMO = REPO / "configs" / "demo.toml"
NPM = REPO / "tests" / "servers" / "npm"
FILESYSTEM = NPM / "node_modules" / ".bin" / "mcp-server-filesystem"
DESKTOP = Path(".config/Claude/claude_desktop_config.json")
USER_FILES = {
    "claude-desktop": (DESKTOP, "mcpServers"),
    "claude-code": (Path(".claude.json"), "mcpServers"),
    "cursor": (Path(".cursor/mcp.json"), "mcpServers"),
    "vscode": (Path(".config/Code/User/mcp.json"), "servers"),
}
"""Each host's user file under HOME (Linux), and the key of its servers."""
VENV_BIN = Path(sys.executable).parent
"""The venv's folder of programs (``uv``, ``mcpmount``): on the shell's ``PATH`` that
``install`` runs in, never on the host's."""


def shell(home: Path) -> dict[str, str]:
    """The environment of a shell with the venv active, as a user runs ``install`` in."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MCPMOUNT_"))}
    return keep | {"HOME": str(home), "PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin"}


def installed(home: Path, config: Path, host: str = "claude-desktop") -> dict[str, Any]:
    """Install ``config`` into ``host``'s user file under ``home``; return the entry."""
    done = mcpmount("install", host, str(config), env=shell(home), cwd=home)
    assert done.returncode == 0, done.stderr
    file, key = USER_FILES[host]
    return json.loads((home / file).read_text())[key]["mcpmount"]


def as_the_host(entry: dict[str, Any], home: Path) -> StdioServerParameters:
    """The entry, started as Claude Desktop starts it: ``env -i`` leaves only ``HOME``,
    ``PATH=/usr/bin:/bin`` and the entry's own ``env``; the working directory is ``/``."""
    env = [f"{key}={value}" for key, value in entry.get("env", {}).items()]
    bare = ["-i", f"HOME={home}", "PATH=/usr/bin:/bin", *env]
    return StdioServerParameters(
        command="/usr/bin/env", args=[*bare, entry["command"], *entry["args"]], cwd="/"
    )


def text(result: mcp_types.CallToolResult) -> str:
    assert not result.is_error, result.content
    return " ".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


async def tells_the_time(entry: dict[str, Any], home: Path, log: Path) -> None:
    """Start ``entry`` as the host does and ask its ``clock__now`` for Tokyo's time."""
    with log.open("w") as errlog:
        client = Client(stdio_client(as_the_host(entry, home), errlog=errlog))
        async with connected(client):
            await wait_for_tool(client, "clock__now")
            result = await client.call_tool("clock__now", {"timezone": "Asia/Tokyo"})
            assert text(result).endswith("+09:00")


def npx_and_uv_config(tmp_path: Path) -> tuple[Path, Path]:
    """A config of a pinned npm server run by ``npx`` and the clock run by ``uv``, and the
    folder the filesystem server shares."""
    assert FILESYSTEM.exists(), "server-filesystem is missing: npm ci --prefix tests/servers/npm"
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "hello.txt").write_text("hi")
    config = tmp_path / "servers.toml"
    uv_args = ["run", "--no-project", "--offline", "--python", sys.executable]
    config.write_text(
        "[registry]\nstartup_timeout = 60\n\n"
        "[servers.files]\n"
        'command = "npx"\n'
        f'args = ["--no-install", "mcp-server-filesystem", "{shared}"]\n'
        f'cwd = "{NPM}"\n\n'
        "[servers.clock]\n"
        'command = "uv"\n'
        f"args = {json.dumps([*uv_args, str(REPO / 'examples' / 'servers' / 'clock.py')])}\n"
    )
    return config, shared


@pytest.mark.anyio
@pytest.mark.parametrize("host", list(USER_FILES))
async def test_the_demo_entry_answers_a_call_started_as_the_host_starts_it(
    tmp_path: Path, host: str
) -> None:
    """The README's host step, for each host: the demo's servers run on mcpmount's own
    Python, so they start with the host's bare PATH, where ``python3`` is the system's,
    without ``mcp``."""
    home = tmp_path / "home"
    home.mkdir()
    entry = installed(home, DEMO, host)
    assert entry["args"][-2:] == ["serve", str(DEMO)]
    await tells_the_time(entry, home, tmp_path / "serve.log")


@pytest.mark.anyio
async def test_an_entry_of_a_config_that_serves_http_speaks_stdio_to_its_host(
    tmp_path: Path,
) -> None:
    """A config whose ``[serve]`` says ``transport = "http"`` (for running it as a team's
    gateway) still makes an entry its host can talk to: the entry says ``--transport stdio``,
    where without it ``serve`` would listen on a port and the host would hear nothing."""
    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "gateway.toml"
    config.write_text(
        '[serve]\ntransport = "http"\nport = 0\n\n'
        '[servers.clock]\ncommand = "${MCPMOUNT_PYTHON}"\n'
        f'args = ["{REPO / "examples" / "servers" / "clock.py"}"]\n'
    )
    entry = installed(home, config)
    assert entry["args"][-4:] == ["serve", "--transport", "stdio", str(config)]
    await tells_the_time(entry, home, tmp_path / "serve.log")


@pytest.mark.anyio
async def test_an_entry_of_npx_and_uv_servers_answers_calls_started_as_the_host_starts_it(
    tmp_path: Path,
) -> None:
    """``uv`` is in the venv, on the shell's PATH only: the entry records the PATH it needs
    (and ``npx``'s ``node``'s), so the host's bare PATH finds both."""
    home = tmp_path / "home"
    home.mkdir()
    config, shared = npx_and_uv_config(tmp_path)
    entry = installed(home, config)
    assert entry["env"]["PATH"].split(os.pathsep)[0] == str(VENV_BIN)
    with (tmp_path / "serve.log").open("w") as errlog:
        client = Client(stdio_client(as_the_host(entry, home), errlog=errlog))
        async with connected(client):
            await wait_for_tool(client, "files__list_directory")
            await wait_for_tool(client, "clock__now")
            listing = await client.call_tool("files__list_directory", {"path": str(shared)})
            assert "hello.txt" in text(listing)
            now = await client.call_tool("clock__now", {"timezone": "UTC"})
            assert text(now).endswith("+00:00")


OLD_DEMO = """\
[servers.notes]
command = "python3"
args = ["examples/servers/notes.py"]
cwd = "{repo}"
"""
"""The demo's server as it was: ``python3`` from PATH, the venv's in the shell."""


def test_check_as_host_reports_each_server_where_check_in_the_shell_sees_nothing_wrong(
    tmp_path: Path,
) -> None:
    """``check --as-host`` starts the entry from the host's file, bare, in ``/``: the demo's
    servers each list tools (the deferred one said so). An entry written by hand, as the
    README showed, for a server that needs the shell's ``python3``: ``check --from`` in the
    shell mounts it, ``check --as-host`` reports it not mounted, with why."""
    home = tmp_path / "home"
    home.mkdir()
    installed(home, DEMO)
    root = Path("/")
    done = mcpmount("check", "--as-host", "claude-desktop", "--json", env=shell(home), cwd=root)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    rows = {row["server"]: row for row in answer["servers"]}
    assert (answer["ok"], list(rows)) == (True, ["notes", "clock", "legacy"])
    assert rows["notes"]["tools"] > 0
    assert rows["clock"]["tools"] > 0
    assert rows["legacy"]["deferred"] is True

    old = tmp_path / "old-demo.toml"
    old.write_text(OLD_DEMO.format(repo=REPO))
    by_hand = {"command": str(VENV_BIN / "mcpmount"), "args": ["serve", str(old)]}
    (home / DESKTOP).write_text(json.dumps({"mcpServers": {"mcpmount": by_hand}}))
    from_shell = mcpmount("check", "--from", "claude-desktop", env=shell(home), cwd=root)
    assert from_shell.returncode == 0, from_shell.stderr  # the shell sees nothing wrong
    done = mcpmount("check", "--as-host", "claude-desktop", env=shell(home), cwd=root)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, said
    assert "notes: no tools listed: not mounted" in said
    assert "No module named 'mcp'" in said  # the system's python3, from serve's stderr
