"""``mcpmount --version`` says which mcpmount this is, without a command or a config."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from cli.cli_support import mcpmount

pytestmark = pytest.mark.slow


def test_version_prints_the_installed_version_and_exits_0() -> None:
    done = mcpmount("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"mcpmount {version('mcpmount')}")
