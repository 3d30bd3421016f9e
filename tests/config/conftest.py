"""The `write` fixture of the config tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from config_support import Write


@pytest.fixture(name="write")
def _write(tmp_path: Path) -> Write:
    """Write a config file into tmp_path and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write
