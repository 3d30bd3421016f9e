"""The examples and the demo config work as the README says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "configs" / "demo.toml"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # The demo's servers run on ${MCPMOUNT_PYTHON}, this interpreter: no venv on PATH needed.
    return subprocess.run(
        [*args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def test_the_embedding_example_finds_a_deferred_tool_and_calls_it() -> None:
    """examples/embed.py: search activates clock__convert_time, and the call answers."""
    done = run(sys.executable, "examples/embed.py", str(DEMO))
    assert done.returncode == 0, done.stderr
    assert "model calls clock__convert_time" in done.stdout
    assert "2026-11-29T17:00+09:00" in done.stdout
    assert "Done after 4 tool results." in done.stdout


def test_check_on_the_demo_config_mounts_every_server() -> None:
    """`mcpmount check configs/demo.toml --json` reports every server mounted, exit 0."""
    done = run(sys.executable, "-m", "mcpmount", "check", str(DEMO), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert [s["server"] for s in report["servers"]] == ["notes", "clock", "legacy"]
    assert all(s["state"] == "mounted" and s["tools"] > 0 for s in report["servers"])


def test_the_approval_example_denies_a_deletion_and_the_note_stays() -> None:
    """examples/approval.py: the add runs, the delete is denied with its reason, and the
    note is still listed afterwards."""
    done = run(sys.executable, "examples/approval.py", str(DEMO))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "add_note ran, no approval needed: True",
        "approver asked: notes__delete_note({'note_id': 1}) [turn 2]",
        "the model reads: server 'notes': tool 'notes__delete_note': the call was denied and "
        "not sent to the server: the user keeps every note; archive it instead",
        "the note is still there: True",
    ]
