"""Shared fixtures: the anyio backend, the leak checker and an in-process HTTP server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from http_fixture import build_http_fixture_server, serve_http
from leaks import LeakChecker, leak_checked

FIXTURE_SERVER = Path(__file__).parent / "servers" / "fixture_server.py"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Session scope, so a module-scoped async fixture (servers its tests share) can use it."""
    return "asyncio"


@pytest.fixture(name="fixture_server_cmd")
def fixture_server_cmd_fixture() -> list[str]:
    """`[sys.executable, ".../fixture_server.py"]`; append flags for the behaviour you need."""
    return [sys.executable, str(FIXTURE_SERVER)]


@pytest.fixture(name="no_leaks")
async def no_leaks_fixture(anyio_backend: str) -> AsyncIterator[LeakChecker]:
    """Fail the test (at teardown) if it leaves processes, zombies, fds, threads or tasks behind.

    Async on purpose: it runs in the test's event loop, so the loop's own fds exist at both
    snapshots and `asyncio.all_tasks()` can be compared. Request it before other fixtures
    (first argument, or `pytestmark = pytest.mark.usefixtures("no_leaks")`) so it is torn
    down last. Depends on `anyio_backend` so the anyio plugin also runs it for sync tests.
    """
    async with leak_checked() as checker:
        yield checker


@pytest.fixture(name="http_server")
async def http_server_fixture(anyio_backend: str) -> AsyncIterator[str]:
    """URL (`http://127.0.0.1:PORT/mcp`) of an in-process MCPServer with echo/add/sleep."""
    async with serve_http(build_http_fixture_server().streamable_http_app()) as url:
        yield url
