"""``mcpmount check`` shows what each sandbox mounts, and refuses a sandbox that would show
what it must hide; the real server-filesystem, installed with npm's user prefix in
``~/.local``, is sandboxed without the rest of ``~/.local``.

Through the CLI as a user runs it, in a scratch home with planted secrets (`layouts`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from layouts import INSTALL_TIMEOUT, PYTHON, SECRETS, install, run, scratch_home

from mcpmount.config import RegistrySettings, StdioServer
from mcpmount.errors import ServerStartError
from mcpmount.registry import Registry
from support import text_of

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.usefixtures("bwrap"),
]

FILESYSTEM_VERSION = "2026.8.31"
"""As pinned in ``tests/servers/npm/package.json``."""


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch ``$HOME`` with the secrets planted (`layouts.scratch_home`)."""
    return scratch_home(tmp_path, monkeypatch)


def rows_of(command: str, config: Path, home: Path) -> dict[str, dict[str, object]]:
    """``mcpmount check --json CONFIG`` (or ``status --json --local``) with ``home`` as
    HOME: its rows by server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPMOUNT_", "XDG_"))}
    argv = [command, "--json", str(config)] + (["--local"] if command == "status" else [])
    done = subprocess.run(
        [sys.executable, "-m", "mcpmount", *argv],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
        env=env | {"HOME": str(home)},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    return {row["server"]: row for row in (report if command == "status" else report["servers"])}


def test_check_lists_each_sandbox_mounts_and_refuses_one_that_would_show_a_secret(
    home: Path, tmp_path: Path
) -> None:
    """A ``~/bin`` script mounts itself and its interpreter's prefix, never the home; a
    virtualenv holding a ``.env`` is refused, naming the path and what to list instead."""
    command, path = install("home-bin", home, tmp_path, tmp_path)
    tools = home / "tools"  # python -m venv in a folder that holds a .env
    (tools / "bin").mkdir(parents=True)
    (tools / "pyvenv.cfg").write_text(f"home = {Path(PYTHON).parent}\n")
    (tools / ".env").write_text("API_TOKEN=planted")
    os.symlink(command, tools / "bin" / "server")
    config = tmp_path / "mcpmount.toml"
    config.write_text(
        f'[servers.tool]\ncommand = "{command}"\nenv = {{ PATH = "{path}" }}\nsandbox = true\n'
        f'[servers.boxed]\ncommand = "{tools}/bin/server"\nsandbox = true\n'
    )
    rows = rows_of("check", config, home)
    tool = rows["tool"]
    assert tool["state"] == "mounted", tool["error"]
    assert tool["sandbox"] == "bwrap, network off"
    prefix = str(Path(PYTHON).parent.parent)
    assert tool["sandbox_mounts"] == {
        "program": [command, prefix] if len(command) < len(prefix) else [prefix, command],
        "read": [],
        "write": [],
        "refused": None,
    }
    boxed = rows["boxed"]
    assert boxed["state"] == "failed"
    assert boxed["sandbox"] == f"refused (would show {tools})"
    error = str(boxed["error"])
    assert f"would need {tools} shown" in error
    assert "it holds .env" in error
    assert "read = [...]" in error
    assert "planted" not in json.dumps(rows)
    status = rows_of("status", config, home)  # status --json says the same
    assert status["tool"]["sandbox_mounts"] == tool["sandbox_mounts"]
    assert status["boxed"]["sandbox_mounts"] == boxed["sandbox_mounts"]


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_server_filesystem_in_npms_user_prefix_serves_a_home_without_its_secrets(
    home: Path, sandboxed: bool
) -> None:
    """``npm install -g --prefix ~/.local``: the package's ``node_modules`` is mounted, not
    ``~/.local`` (mcpmount's token store). Serving the whole home, it reads the planted
    secrets only unsandboxed; sandboxed, the home it serves is the private one."""
    package = f"@modelcontextprotocol/server-filesystem@{FILESYSTEM_VERSION}"
    prefix = home / ".local"
    run(["npm", "install", "-g", "--prefix", str(prefix), "--no-audit", "--no-fund", package], home)
    command = prefix / "bin" / "mcp-server-filesystem"
    assert command.is_symlink()
    spec = StdioServer.model_validate(
        {
            "command": str(command),
            "args": [str(home)],
            "env": {"PATH": "/usr/bin:/bin"},
            "sandbox": {"write": [str(home / "project")]} if sandboxed else False,
        }
    )
    async with Registry() as registry:
        await registry.mount("fs", spec)
        for name, text in SECRETS.items():
            if name.startswith("project/"):
                continue  # its write folder: shown on purpose
            got = await registry.call("fs__read_text_file", {"path": str(home / name)})
            assert got.is_error is sandboxed, f"{name}: {text_of(got)}"
            assert (text in text_of(got)) is not sandboxed
        await registry.call(
            "fs__write_file", {"path": str(home / "project" / "note.txt"), "content": "hi"}
        )
    assert (home / "project" / "note.txt").read_text() == "hi"


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
async def test_a_token_dir_set_inside_a_programs_install_is_never_shown(
    home: Path, tmp_path: Path, sandboxed: bool
) -> None:
    """``token_dir`` set inside the prefix a server is installed in (``/opt/app/var/tokens``
    beside ``/opt/app/bin``): its sandbox would mount the prefix whole, so it is refused,
    naming the folder; unsandboxed, the same server reads the planted login, so the test
    can fail."""
    command, _ = install("home-bin", home, tmp_path, tmp_path)
    app = home / "opt" / "app"  # a virtualenv, shown whole to a program in it
    (app / "bin").mkdir(parents=True)
    (app / "pyvenv.cfg").write_text(f"home = {Path(PYTHON).parent}\n")
    os.symlink(command, app / "bin" / "server")
    tokens = app / "var" / "tokens"
    tokens.mkdir(parents=True)
    (tokens / "github.json").write_text('{"access_token": "planted"}')
    path = f"{Path(PYTHON).parent}:/usr/bin:/bin"
    spec = StdioServer.model_validate(
        {"command": str(app / "bin" / "server"), "env": {"PATH": path}, "sandbox": sandboxed}
    )
    async with Registry(RegistrySettings(token_dir=str(tokens))) as registry:
        if sandboxed:
            with pytest.raises(ServerStartError) as caught:
                await registry.mount("probe", spec)
            error = str(caught.value)
            assert f"would need {app} shown" in error, error
            assert f"it holds {tokens}" in error, error
            assert "planted" not in error
            return
        await registry.mount("probe", spec)
        got = text_of(await registry.call("probe__read", {"path": str(tokens / "github.json")}))
        assert got == 'ok: {"access_token": "planted"}', got
