"""``mcpmount audit`` flags a sandbox that shows the user's credentials: a ``read`` or
``write`` path that is, holds or lies in ``~/.ssh``, ``~/.aws``, mcpmount's own token
store...; a sandbox of plain folders has no such finding. Through the CLI, in a scratch
home with the credentials in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURE

pytestmark = pytest.mark.usefixtures("no_leaks")


def audit_json(config: Path, home: Path) -> list[dict[str, str | None]]:
    """``mcpmount audit --json CONFIG`` with ``home`` as HOME: its findings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPMOUNT_", "XDG_"))}
    done = subprocess.run(
        [sys.executable, "-m", "mcpmount", "audit", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env | {"HOME": str(home)},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]


def test_a_sandbox_showing_credentials_is_a_high_finding_with_its_remedy(
    tmp_path: Path,
) -> None:
    """Each path that shows a credential location is one finding naming it; the plain
    folder beside them is none."""
    home = tmp_path / "home"
    for name in (".ssh", ".aws", ".local/state/mcpmount/tokens", "notes"):
        (home / name).mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    config = tmp_path / "mcpmount.toml"
    entry = f'command = "{sys.executable}"\nargs = ["{FIXTURE}"]\n'
    config.write_text(
        f"[servers.leaky]\n{entry}"
        'sandbox = { read = ["~/.ssh/id_rsa", "~/notes"], write = ["~/.local/state"] }\n'
        f"[servers.whole]\n{entry}"
        'sandbox = { read = ["~"] }\n'
        f"[servers.plain]\n{entry}"
        'sandbox = { write = ["~/notes"] }\n'
    )
    findings = [f for f in audit_json(config, home) if f["rule"] == "sandbox-credentials"]
    shown = sorted((f["server"], f["severity"], str(f["message"])) for f in findings)
    state = str(home / ".local" / "state" / "mcpmount")
    assert [(server, severity) for server, severity, _ in shown] == [
        ("leaky", "high"),
        ("leaky", "high"),
        ("whole", "high"),
    ]
    leaky = [message for server, _, message in shown if server == "leaky"]
    assert any(
        m.startswith(f"its sandbox read path ~/.ssh/id_rsa shows {home}/.ssh,") for m in leaky
    )
    assert any(m.startswith(f"its sandbox write path ~/.local/state shows {state},") for m in leaky)
    assert all("list only the folders it needs" in message for _, _, message in shown)
