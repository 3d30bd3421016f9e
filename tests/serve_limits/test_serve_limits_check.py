"""``mcpmount check`` reports a ``[serve.limits]`` rule it cannot enforce, naming the key,
before anything is served."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serve_limits_support import limited_config

pytestmark = pytest.mark.usefixtures("no_leaks")


def check(config: str) -> subprocess.CompletedProcess[str]:
    """Run ``mcpmount check CONFIG`` as a user does."""
    command = [sys.executable, "-m", "mcpmount", "check", config]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_check_names_a_rate_it_cannot_read_and_a_cap_below_one(tmp_path: Path) -> None:
    config = limited_config(tmp_path, 'rate = "60/minte"', "concurrency = 0", servers=())
    done = check(config)
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert "serve.limits.rule[0].rate: is not a rate" in said
    assert '"60/minute"' in said  # how to write one
    assert "serve.limits.rule[1].concurrency: must be at least 1" in said


def test_check_accepts_the_rules_the_docs_show(tmp_path: Path) -> None:
    rules = (
        'rate = "60/minute"\nconcurrency = 4',
        'principal = "ci"\ntools = "gh__*"\nrate = "5 per 10 seconds"\nper_tool = true',
    )
    config = limited_config(tmp_path, *rules, servers=())
    done = check(config)
    assert "serve.limits" not in done.stderr, done.stderr
