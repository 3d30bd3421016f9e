"""Each CLI test keeps its cached manifests to itself: ``tools``, ``search``, ``prompts``
and ``resources`` write them, and a later test must never list from another's. The
``remotes`` servers are shared by the host-file tests of two modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cli.cli_support import Remotes, remote_servers


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the user's cache directory (``XDG_CACHE_HOME``) of every ``mcpmount`` this
    test runs into its own temporary directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(name="remotes")
async def remotes_fixture(tmp_path: Path) -> AsyncIterator[Remotes]:
    """The fixture server over streamable HTTP and over legacy SSE (`remote_servers`)."""
    async with remote_servers(tmp_path) as remotes:
        yield remotes
