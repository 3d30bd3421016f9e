"""The command line's config loading: a config it cannot use exits 2 before any server starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import fixture_server, write_config

SECRET = "s3cr3t-token-value-4242"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def test_a_bad_config_exits_2_naming_the_key_and_hiding_the_secret(tmp_path: Path) -> None:
    """A misspelled key is named with a suggestion; its secret value never appears."""
    body = fixture_server("one", extra=f'enw = {{ TOKEN = "{SECRET}" }}')
    done = mcpmount("check", write_config(tmp_path, body))
    assert done.returncode == 2
    assert "servers.one.enw" in done.stderr
    assert "env" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_a_missing_config_file_exits_2(tmp_path: Path) -> None:
    """The default path does not exist in an empty directory."""
    done = mcpmount("tools", str(tmp_path / "nope.toml"))
    assert done.returncode == 2
    assert "file not found" in done.stderr
