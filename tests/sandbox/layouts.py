"""Servers installed where people install them, into a scratch home full of planted secrets.

`install` puts the probe (``tests/servers/probe_package``, ``tests/servers/probe_npm``:
``read(path)`` and ``write(path)``, the standard library or Node alone) into a home with a
real installer: ``pipx install`` and ``uv tool install`` of its wheel (the venv's own pipx
and uv, built once per session with uv and hatchling from PyPI), ``npx`` of its package
from a scratch npm cache, a script in ``~/bin``, and a script in a project's ``bin/``. Each
returns the command and the PATH a user's config would hold. `plant` writes the secrets a
sandbox must hide: an SSH key, AWS credentials, an OAuth token in mcpmount's own store,
and a project's ``.env``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import SERVERS

PACKAGE = SERVERS / "probe_package"
NPM_PACKAGE = SERVERS / "probe_npm"
LAYOUTS = ("pipx", "uv-tool", "npx", "home-bin", "project-bin")
INSTALL_TIMEOUT = 120
"""Seconds one install may take (uv, pipx and npm are fast; this machine may be busy)."""

BIN = Path(sys.executable).parent
"""The venv's own ``pipx`` and ``uv`` (the dev extras)."""
PYTHON = os.path.realpath(sys.executable)
"""The base interpreter that installed servers run on (this venv's, through its symlinks)."""

SECRETS = {
    ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY----- planted",
    ".aws/credentials": "[default]\naws_secret_access_key = planted",
    ".local/state/mcpmount/tokens/x.json": '{"access_token": "planted"}',
    "project/.env": "API_TOKEN=planted",
}
"""Under the home: each file a sandboxed server must not read, with what it holds."""


def run(argv: list[str], home: Path, **extra: str) -> None:
    """Run an installer with ``home`` as HOME and none of this user's tool settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("XDG_", "PIPX_", "UV_", "npm_", "NPM_", "MCPMOUNT_"))
    }
    env |= {"HOME": str(home), "PATH": f"{BIN}:{env.get('PATH', os.defpath)}"} | extra
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{argv[:3]} failed: {done.stderr[-2000:]}"


def build(out: Path) -> tuple[Path, Path]:
    """Build the probe's wheel (uv, hatchling from PyPI) and npm tarball into ``out``."""
    run([str(BIN / "uv"), "build", "--wheel", "-o", str(out), str(PACKAGE)], Path.home())
    shutil.rmtree(PACKAGE / "build", ignore_errors=True)
    run(["npm", "pack", str(NPM_PACKAGE), "--pack-destination", str(out)], out)
    [wheel] = out.glob("*.whl")
    [tarball] = out.glob("*.tgz")
    return wheel, tarball


def plant(home: Path) -> None:
    """Write `SECRETS` under ``home``, and make ``project`` look like a project."""
    for name, text in SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    (home / "project" / ".git").mkdir()
    (home / "project" / "pyproject.toml").write_text("[project]\nname = 'p'\n")


def scratch_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home under ``tmp_path`` with `SECRETS` planted, made ``$HOME`` (mcpmount's state
    directory with it) for the test."""
    home = tmp_path / "home"
    plant(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    return home


def _script(path: Path) -> None:
    """The probe as one script run by ``python3`` on the child's PATH."""
    path.parent.mkdir(parents=True, exist_ok=True)
    source = (PACKAGE / "mcpmount_probe.py").read_text()
    path.write_text("#!/usr/bin/env python3\n" + source)
    path.chmod(0o755)


def install(layout: str, home: Path, wheel: Path, tarball: Path) -> tuple[str, str]:
    """Install the probe in ``layout`` under ``home``; return its command and PATH."""
    # The base interpreter's bin first: ``python3`` there, not this venv's or the system's.
    path = f"{home / '.local' / 'bin'}:{home / 'bin'}:{Path(PYTHON).parent}:/usr/bin:/bin"
    command = str(home / ".local" / "bin" / "mcpmount-probe")
    if layout == "pipx":
        run([str(BIN / "pipx"), "install", str(wheel)], home, PIPX_DEFAULT_PYTHON=PYTHON)
    elif layout == "uv-tool":
        never = {"UV_PYTHON": PYTHON, "UV_PYTHON_DOWNLOADS": "never", "UV_OFFLINE": "1"}
        run([str(BIN / "uv"), "tool", "install", str(wheel)], home, **never)
    elif layout == "npx":
        run(["npx", "--yes", "--package", str(tarball), "-c", "true"], home)
        [found] = (home / ".npm" / "_npx").glob("*/node_modules/.bin/mcpmount-probe")
        command = str(found)
    elif layout == "home-bin":
        command = str(home / "bin" / "mcpmount-probe")
        _script(Path(command))
    else:
        command = str(home / "project" / "bin" / "server")
        _script(Path(command))
    assert os.access(command, os.X_OK), f"{layout} installed no {command}"
    return command, path
