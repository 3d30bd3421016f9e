"""An mcpmount that would serve the file holding it: refused by ``install`` and by ``serve``
before anything starts, and, hidden behind a shell, stopped at the first nested mcpmount."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from cli.cli_support import mcpmount

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(120)]

DESKTOP = Path(".config/Claude/claude_desktop_config.json")


def shell(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MCPMOUNT_"))}
    return keep | {"HOME": str(home)}


def marker_server(marker: Path) -> dict[str, object]:
    """A server that, started, leaves ``marker``: its absence proves nothing started."""
    return {"command": "/bin/sh", "args": ["-c", f"touch {shlex.quote(str(marker))}"]}


def test_install_refuses_the_hosts_own_file_and_leaves_it(tmp_path: Path) -> None:
    """``install claude-desktop <Claude Desktop's own file>`` would write an entry serving
    the file that holds it: refused (exit 2), the file as it was, no backup, nothing run."""
    home = tmp_path / "home"
    path = home / DESKTOP
    path.parent.mkdir(parents=True)
    marker = tmp_path / "started"
    path.write_text(json.dumps({"mcpServers": {"memo": marker_server(marker)}}, indent=2))
    before = path.read_text()
    done = mcpmount("install", "claude-desktop", str(path), env=shell(home), cwd=tmp_path)
    said = " ".join(done.stderr.split())
    assert done.returncode == 2, said
    assert "refused: this is the host's own file" in said
    assert str(path) in said.replace(" ", "")  # wrapped at the terminal's width
    assert path.read_text() == before
    assert list(path.parent.iterdir()) == [path]  # no backup, no temporary file
    assert not marker.exists()


def test_install_refuses_a_config_whose_server_serves_the_hosts_file(tmp_path: Path) -> None:
    """A config with a server that runs ``mcpmount serve`` on the host's file, installed
    into that host: the host would start it, and it the host's file again."""
    home = tmp_path / "home"
    path = home / DESKTOP
    config = tmp_path / "servers.toml"
    serve = [sys.executable, "-m", "mcpmount", "serve", str(path)]
    config.write_text(f"[servers.again]\ncommand = {json.dumps(serve[0])}\n")
    config.write_text(config.read_text() + f"args = {json.dumps(serve[1:])}\n")
    done = mcpmount("install", "claude-desktop", str(config), env=shell(home), cwd=tmp_path)
    said = " ".join(done.stderr.split())
    assert done.returncode == 2, said
    assert "refused: servers.again: starts mcpmount on" in said
    assert not path.exists()


def test_serve_refuses_a_config_that_serves_itself_and_starts_nothing(tmp_path: Path) -> None:
    """``serve`` on a config with a server that serves that config: refused before any
    server starts, the marker server of the same config included."""
    marker = tmp_path / "started"
    config = tmp_path / "self.toml"
    config.write_text(
        "[servers.first]\n"
        f"command = {json.dumps('/bin/sh')}\n"
        f"args = {json.dumps(['-c', f'touch {shlex.quote(str(marker))}'])}\n\n"
        "[servers.me]\n"
        'command = "${MCPMOUNT_PYTHON}"\n'
        'args = ["-m", "mcpmount", "serve", "self.toml"]\n'
        'cwd = "."\n'
    )
    done = mcpmount("serve", str(config), env=shell(tmp_path), cwd=Path("/"))
    said = " ".join(done.stderr.split())
    assert done.returncode == 2, said
    unwrapped = "".join(done.stderr.split())  # rich wraps a long path anywhere
    assert f"refused:servers.me:startsmcpmounton{config}" in unwrapped
    assert not marker.exists()


def test_a_loop_behind_a_shell_stops_at_the_first_nested_mcpmount(tmp_path: Path) -> None:
    """A server that serves its own config through ``sh -c`` (no command line to read):
    the nested mcpmount sees its file among those its parent mounts and refuses, naming it,
    before starting anything; so the shell ran once, and the parent reports the failure."""
    count = tmp_path / "count"
    config = tmp_path / "loop.toml"
    serve = shlex.join([sys.executable, "-m", "mcpmount", "serve", str(config)])
    script = f"echo x >> {shlex.quote(str(count))}; exec {serve}"
    config.write_text(
        "[registry]\nstartup_timeout = 30\n\n"
        f'[servers.me]\ncommand = "/bin/sh"\nargs = {json.dumps(["-c", script])}\n'
    )
    done = mcpmount("check", str(config), env=shell(tmp_path), cwd=tmp_path)
    said = " ".join((done.stdout + done.stderr).split()).replace("│", "")
    said = " ".join(said.split())
    assert done.returncode == 1, said
    assert "refused: this mcpmount was started (depth 1) by the mcpmount that mounts" in said
    assert str(config) in said.replace(" ", "")
    assert count.read_text() == "x\n"  # one nested mcpmount, which started nothing
