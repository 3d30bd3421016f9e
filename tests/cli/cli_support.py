"""Run ``mcpmount`` as a user runs it: a subprocess, real servers, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from support import FIXTURE


def mcpmount(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``mcpmount ARGS`` to its end; ``env`` replaces the environment, ``cwd`` the
    current directory."""
    return subprocess.run(
        [sys.executable, "-m", "mcpmount", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def write_config(tmp_path: Path, body: str) -> str:
    path = tmp_path / "mcpmount.toml"
    path.write_text(body)
    return str(path)


def server(name: str, *flags: str, extra: str = "") -> str:
    """A config table for the fixture server, mounted as ``name``."""
    args = json.dumps([FIXTURE, *flags])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n{extra}\n'
