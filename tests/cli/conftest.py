"""Each CLI test keeps its cached manifests to itself: ``tools``, ``search``, ``prompts``
and ``resources`` write them, and a later test must never list from another's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the user's cache directory (``XDG_CACHE_HOME``) of every ``mcpmount`` this
    test runs into its own temporary directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
