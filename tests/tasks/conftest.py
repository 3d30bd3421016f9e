"""The `everything` fixture: server-everything's spec over each transport it serves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tasks_support import http_everything, stdio_everything

from leaks import LeakChecker
from mcpmount.config import ServerSpec


@pytest.fixture(name="everything", params=["stdio", "http"])
async def everything_fixture(
    no_leaks: LeakChecker, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ServerSpec]:
    """server-everything over stdio (spawned by the registry), or over streamable HTTP
    (run here, on a port the OS picks); the leak check outlives both."""
    if request.param == "stdio":
        yield stdio_everything()
        return
    async with http_everything(tmp_path / "everything.log") as spec:
        yield spec
