"""``tests/bench/code_mode.py`` runs end to end at tiny sizes, as a user runs it.

The benchmark itself refuses to print figures when the three ways reach different answers;
this checks that it runs on the real servers, that its figures have the shape the task
implies (code mode: three round trips, fewer tokens both ways of counting), that its
start-up gate fails the run when the median is over the limit, and that it leaks nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(300)]

SCRIPT = Path(__file__).with_name("code_mode.py")
ROOT = SCRIPT.parents[2]


async def test_the_code_mode_benchmark_compares_three_ways_and_gates_its_start() -> None:
    argv = [sys.executable, str(SCRIPT), "--services", "6", "--log-lines", "4"]
    # A limit no run can meet, so the gate's failing exit is what is checked.
    argv += ["--startup-runs", "3", "--max-startup-ms", "0.001", "--json"]
    with anyio.fail_after(240):
        done = await anyio.run_process(argv, cwd=ROOT, check=False, stderr=subprocess.PIPE)
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    figures = json.loads(done.stdout)
    ways = figures["ways"]
    assert [ways[name]["round_trips"] for name in ("listed", "search", "code")] == [5, 6, 3]
    assert ways["code"]["calls"] == 3  # two lookups and run_code
    assert ways["code"]["answer"].startswith("1 of 6 services are degraded:\n- svc-003")
    for other in ("listed/code", "search/code"):
        assert figures["ratios"][other]["new"] > 1, figures
        assert figures["ratios"][other]["read"] > 1, figures
    start = figures["startup"]
    assert start["runs"] == 3
    assert start["within"] is False
    assert start["first_call_median_ms"] > 0
    assert 0 < start["startup_median_ms"] <= start["runner_first_call_median_ms"]
