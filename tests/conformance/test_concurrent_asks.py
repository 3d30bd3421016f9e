"""The harness's own scenario "+concurrent-asks" (conformance/asks.py): two clients each
with a call in flight to a server that asks on its standalone stream. It passes directly;
through `mcpmount serve` it passes when the server is mounted ``sessions = "per_client"``,
and fails under ``"shared"`` (one upstream session: nothing says whose the question is)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from conformance.everything_support import NODE

pytestmark = [pytest.mark.anyio, pytest.mark.conformance, pytest.mark.usefixtures("no_leaks")]

RUN = Path(__file__).parents[2] / "conformance" / "run.py"


async def run_asks(tmp_path: Path, sessions: str) -> tuple[int, str]:
    """Run the scenario with the server mounted with ``sessions``; exit status and table."""
    if not NODE.exists():
        pytest.fail(f"node is not installed: run `npm ci --prefix {RUN.parent}`")
    command = [sys.executable, str(RUN), "--scenario", "+concurrent-asks"]
    command += ["--asks-sessions", sessions, "--output-dir", str(tmp_path)]
    with anyio.fail_after(240):
        done = await anyio.run_process(command, check=False)
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def test_concurrent_asks_pass_through_serve_with_sessions_per_client(
    tmp_path: Path,
) -> None:
    status, table = await run_asks(tmp_path, "per_client")
    assert status == 0, table
    assert "+concurrent-asks  pass    pass" in table


async def test_concurrent_asks_fail_through_serve_with_one_shared_session(
    tmp_path: Path,
) -> None:
    status, table = await run_asks(tmp_path, "shared")
    assert status == 1, table
    assert "+concurrent-asks  pass    FAIL" in table
    assert "pass directly, not through serve: +concurrent-asks" in table
