"""``mcpmount install`` into every host's own file, as its documentation shows one: only
the entry is added (comments, variables, remote servers and layout stay byte for byte),
in the host's own shape; ``--dry-run`` shows that entry alone; ``--print`` writes nothing;
and the entry, started as the host starts it (bare environment, in ``/``), answers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types
import pytest
from host_files import HOSTS, VARIABLES, argv_env, entry_of, only_added, parse, user_env
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cli.cli_support import mcpmount
from mcpmount.config import StdioServer
from mcpmount.hosts import HostApp, load_host
from serve.serve_support import connected, wait_for_tool
from support import fixture_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(120)]

SHAPES = {
    "claude-desktop": {"command", "args"},
    "claude-code": {"type", "command", "args"},
    "cursor": {"command", "args"},
    "vscode": {"type", "command", "args"},
    "windsurf": {"command", "args"},
    "zed": {"source", "command", "args"},
    "codex": {"command", "args"},
    "gemini": {"command", "args"},
    "goose": {"name", "type", "cmd", "args", "enabled", "timeout"},
    "continue": {"name", "command", "args"},
    "lm-studio": {"command", "args"},
}
"""The keys of each host's stdio entry (beside its environment's)."""


def places(tmp_path: Path, host: str) -> tuple[Path, Path, Path]:
    """A HOME holding the host's documented file, and a config of the fixture server."""
    home = tmp_path / "home"
    file, _, text = HOSTS[host]
    (home / file).parent.mkdir(parents=True)
    (home / file).write_text(text)
    config = tmp_path / "servers.toml"
    config.write_text(fixture_server("fx"))
    return home, home / file, config


@pytest.mark.parametrize("host", list(HOSTS))
def test_install_adds_only_its_entry_in_the_hosts_own_shape(tmp_path: Path, host: str) -> None:
    home, path, config = places(tmp_path, host)
    before = path.read_text()
    done = mcpmount("install", host, str(config), env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    added = only_added(before, path.read_text())
    assert any("mcpmount" in line for line in added)
    entry = entry_of(host, home)
    assert SHAPES[host] <= set(entry), entry
    argv, _ = argv_env(host, entry)
    assert Path(argv[0]).is_absolute()
    assert argv[1:] == ["-m", "mcpmount", "serve", str(config)]
    backups = list(path.parent.glob(f"{path.name}.bak-*"))
    assert [b.read_text() for b in backups] == [before]
    # mcpmount's own reader of the host's files finds the entry, and every other server.
    read = load_host(
        HostApp(host), home=home, cwd=tmp_path, environ={"HOME": str(home), **VARIABLES}
    )
    spec = read.config.servers["mcpmount"]
    assert isinstance(spec, StdioServer)
    assert [spec.command, *spec.args] == argv
    assert len(read.config.servers) > 1


@pytest.mark.parametrize("host", ["cursor", "vscode", "codex", "goose"])
def test_dry_run_shows_only_the_entry_and_writes_nothing(tmp_path: Path, host: str) -> None:
    """The diff has the entry's lines (and at most a comma after the line that was last):
    none of the file's own entries is rewritten."""
    home, path, config = places(tmp_path, host)
    before = path.read_text()
    done = mcpmount("install", host, str(config), "--dry-run", env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before
    body = done.stdout.splitlines()[3:]  # after ---, +++ and the first @@
    removed = [line[1:] for line in body if line.startswith("-")]
    added = [line[1:] for line in body if line.startswith("+")]
    assert len(removed) <= 1
    assert all(added[0] == line + "," for line in removed)
    entry_lines = added[len(removed) :]
    assert "mcpmount" in entry_lines[0] or "mcpmount" in entry_lines[1], entry_lines
    _, key, _ = HOSTS[host]
    for other in parse(path)[key]:  # none of the file's own servers is in the entry's lines
        spelt = (f'"{other}"', f".{other}]", f"{other}:")
        assert not any(s in line for line in entry_lines for s in spelt), (other, entry_lines)


def test_print_shows_the_entry_to_paste_and_writes_nothing(tmp_path: Path) -> None:
    home, path, config = places(tmp_path, "codex")
    before = path.read_text()
    done = mcpmount("install", "codex", str(config), "--print", env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[mcp_servers.mcpmount]\ncommand = ")
    assert f'"serve", "{config}"]' in done.stdout
    assert path.read_text() == before
    assert "nothing was written" in " ".join(done.stderr.split())


def as_the_host(host: str, home: Path) -> StdioServerParameters:
    """The entry, started as a desktop host starts it: ``env -i`` leaves only ``HOME``,
    ``PATH=/usr/bin:/bin`` and the entry's own ``env``; the working directory is ``/``."""
    argv, env = argv_env(host, entry_of(host, home))
    bare = ["-i", f"HOME={home}", "PATH=/usr/bin:/bin", *(f"{k}={v}" for k, v in env.items())]
    return StdioServerParameters(command="/usr/bin/env", args=[*bare, *argv], cwd="/")


@pytest.mark.anyio
@pytest.mark.parametrize("host", ["vscode", "zed", "codex", "goose"])
async def test_the_written_entry_answers_a_call_started_as_the_host_starts_it(
    tmp_path: Path, host: str
) -> None:
    """JSON with comments (VS Code, Zed), TOML (Codex), YAML (goose): the entry read back
    from the file that was written runs."""
    home, _, config = places(tmp_path, host)
    done = mcpmount("install", host, str(config), env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with (tmp_path / "serve.log").open("w") as errlog:
        client = Client(stdio_client(as_the_host(host, home), errlog=errlog))
        async with connected(client):
            await wait_for_tool(client, "fx__echo")
            result = await client.call_tool("fx__echo", {"text": f"from {host}"})
    assert not result.is_error, result.content
    assert isinstance(text := result.content[0], mcp_types.TextContent)
    assert text.text == f"from {host}"


def test_install_runs_on_this_python(tmp_path: Path) -> None:
    """The entry's command is this interpreter (a venv's, by its link), not a script."""
    home, _, config = places(tmp_path, "zed")
    done = mcpmount("install", "zed", str(config), env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert entry_of("zed", home)["command"] == str(Path(sys.executable).absolute())


@pytest.mark.parametrize("host", ["codex", "goose", "continue"])
def test_check_as_host_reads_the_entry_in_the_hosts_own_format(tmp_path: Path, host: str) -> None:
    """``check --as-host`` finds the entry in TOML and YAML (goose's ``cmd``, Continue's
    list) and starts it as the host does."""
    home, _, config = places(tmp_path, host)
    done = mcpmount("install", host, str(config), env=user_env(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = mcpmount("check", "--as-host", host, "--json", env=user_env(home), cwd=Path("/"))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is True
    assert [(row["server"], row["tools"] > 0) for row in answer["servers"]] == [("fx", True)]
