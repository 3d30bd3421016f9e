"""`mcpmount check` reads the policy file a config names: a policy that does not parse, or
does not fit what a policy may speak of, is reported at its line with what to do, and
nothing is mounted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serve_policy_support import GITHUB_POLICY, calls, github, write_setup

CASES = [
    pytest.param(
        GITHUB_POLICY.replace('like "github__delete_*"', 'lik "github__delete_*"'),
        "policy.cedar:7: unexpected token `lik`",
        id="syntax",
    ),
    pytest.param(
        GITHUB_POLICY.replace("resource.name like", "resource.nme like", 1),
        "policy.cedar:2: for policy `policy0`, attribute `nme` on entity type `Tool` not found",
        id="unknown-attribute",
    ),
    pytest.param(
        GITHUB_POLICY.replace('principal.hasTag("role") && ', ""),
        "policy.cedar:6: for policy `policy1`, unable to guarantee safety of access to tag",
        id="claim-read-unguarded",
    ),
    pytest.param(
        GITHUB_POLICY.replace(
            'action, resource is Tool)\nwhen { resource.name like "github__*"',
            'action == Action::"call", resource is Tool)\nwhen { resource.name like "github__*"',
        ),
        'policy.cedar:2: for policy `policy0`, unrecognized action `Action::"call"`',
        id="unknown-action",
    ),
]


def _check(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpmount", "check", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(("policy", "said"), CASES)
def test_check_reports_a_bad_policy_at_its_line(tmp_path: Path, policy: str, said: str) -> None:
    record = tmp_path / "github.log"
    config = write_setup(tmp_path, policy, github(record))
    done = _check(config)
    assert done.returncode != 0
    told = " ".join(done.stderr.split())  # the console wraps long lines
    assert f"serve.policy: {said}" in told, done.stderr
    assert "fix the policy file" in told
    assert calls(record) == []


def test_check_accepts_a_good_policy_and_says_when_the_file_is_missing(tmp_path: Path) -> None:
    record = tmp_path / "github.log"
    config = write_setup(tmp_path, GITHUB_POLICY, github(record))
    good = _check(config)
    (tmp_path / "policy.cedar").unlink()
    missing = _check(config)
    assert good.returncode == 0, good.stderr
    assert missing.returncode != 0
    told = " ".join(missing.stderr.split())
    assert "cannot read the policy file" in told, missing.stderr
