"""``tests/bench/house_ratios.py`` runs end to end at tiny sizes, as a user runs it.

Its figures are timings, so only their shape is checked: every measure of both trees, one
per round, the trees' own code used (the old one from a worktree of ``HEAD``), and the
worktree and every process it started gone afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(400)]

SCRIPT = Path(__file__).with_name("house_ratios.py")
ROOT = SCRIPT.parents[2]


def worktrees() -> str:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    )
    return listed.stdout


async def test_the_house_ratios_compare_both_trees_in_rounds_and_clean_up() -> None:
    argv = [sys.executable, str(SCRIPT), "--old", "HEAD", "--rounds", "2", "--servers", "2"]
    argv += ["--calls", "5", "--hop-calls", "10", "--tools", "200", "--json"]
    with anyio.fail_after(360):
        done = await anyio.run_process(argv, cwd=ROOT, check=False, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    figures = json.loads(done.stdout)
    assert figures["old"] == "HEAD"
    assert figures["leftovers"] == []
    rows = figures["rows"]
    assert list(rows) == [
        *("mount", "mount cpu", "call", "call cpu", "search", "search cpu"),
        *("serve", "direct", "hop", "hop x", "serve cpu", "direct cpu", "hop cpu x"),
    ]
    for measure, row in rows.items():
        assert row["rounds"] == 2, (measure, row)
        if measure != "hop":  # a difference of two times: it may come out below 0
            assert row["old"] > 0, (measure, row)
            assert row["new"] > 0, (measure, row)
            assert 0 < row["low"] <= row["ratio"] <= row["high"], (measure, row)
    assert "house-ratios-" not in worktrees()
