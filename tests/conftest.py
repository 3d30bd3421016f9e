"""Shared fixtures: the anyio backend, the leak checker, an in-process HTTP server and the
semantic model's int8 graph."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from http_fixture import build_http_fixture_server, serve_http
from leaks import LeakChecker, leak_checked

FIXTURE_SERVER = Path(__file__).parent / "servers" / "fixture_server.py"


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A conformance test is slow too: the working tier's ``-m "not slow"`` replaces the
    default ``-m "not conformance"`` (pyproject), and must still leave them out."""
    for item in items:
        if item.get_closest_marker("conformance") is not None:
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture(scope="session", name="int8_graph")
def int8_graph_fixture(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Path]:
    """Put the packaged model's int8 graph in a cache directory: ``int8_graph(cache)`` copies
    it to ``cache / "models"`` and returns ``cache``, whose loads then read it (``"cached"``).

    The graph is built once per session (a build is ~3.5 s of CPU, ~0.2 s to load it kept),
    for tests that need the model loaded, not built; the tests of the build itself build
    their own. Copied, not linked: a test may damage its copy.
    """
    from mcpmount.semantic import PACKAGED_MODEL, Embedder, resolve

    kept = tmp_path_factory.mktemp("int8-graph")
    assert Embedder(*resolve(PACKAGED_MODEL), cache_dir=kept).graph == "built"

    def seeded(cache: Path) -> Path:
        shutil.copytree(kept / "models", cache / "models")
        return cache

    return seeded
