"""The working tier, ``pytest -m "not slow"``, still starts real things in every room.

Marking a module slow takes it out of the tier; this test fails when that leaves a room
with no test that opens servers (every such test proves it leaked nothing through the
``no_leaks`` fixture, so that fixture is how one is told). It collects the suite as the
tier does, in a process of its own (``tier_support`` writes what was selected), so it is
slow itself: the full suite runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
PURE = {
    "config": "pure data, it starts nothing; the cli and registry rooms load configs for real",
    "search": "pure ranking; tests/search_eval/ searches a registry of real servers",
    "conformance": "runs only under `-m conformance`, which the tier replaces",
}
"""Rooms that need no test which opens servers in the tier, and why."""


def _rooms() -> set[str]:
    return {
        path.parent.name
        for path in TESTS.glob("*/test_*.py")
        if path.parent.name not in {"bench", "node_modules"}
    }


def test_every_room_keeps_a_test_that_opens_servers_in_the_working_tier(
    tmp_path: Path,
) -> None:
    report = tmp_path / "tier.json"
    env = {**os.environ, "TIER_REPORT": str(report), "PYTHONPATH": str(TESTS)}
    argv = [
        "--collect-only",
        "-q",
        "-m",
        "not slow",
        "-p",
        "tier_support",
        "-p",
        "no:cacheprovider",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *argv, str(TESTS)],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    selected: dict[str, list[str]] = json.loads(report.read_text())
    opening: dict[str, int] = defaultdict(int)
    for node, fixtures in selected.items():
        parts = Path(node.split("::")[0]).parts
        if len(parts) > 2 and "no_leaks" in fixtures:
            opening[parts[1]] += 1
    rooms = _rooms()
    assert {"serve", "registry", "cli", "config"} <= rooms  # the walk found the rooms
    assert set(PURE) <= rooms, f"PURE names rooms that are gone: {set(PURE) - rooms}"
    bare = sorted(room for room in rooms - set(PURE) if opening[room] == 0)
    assert bare == [], (
        f"rooms without a test that opens servers in `pytest -m 'not slow'`: {bare}; keep "
        "the cheapest end-to-end module of each out of the slow mark"
    )
