"""A registry with ``semantic_model`` computes tool vectors in the background after a mount."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis

from leaks import record_group
from mcpmount.config import RegistrySettings
from mcpmount.registry import Registry
from redis_support import running_redis
from support import fixture

pytestmark = pytest.mark.usefixtures("no_leaks")

QUERY = "calculate a total"
"""No word of it is in the fixture server's ``add`` ("Add two integers.")."""


def names(registry: Registry, query: str) -> list[str]:
    return [hit.tool.name for hit in registry.search(query, 3).hits]


async def test_a_mounted_server_becomes_searchable_by_meaning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """The mount returns at once; within a generous bound the paraphrase finds ``add``."""
    # ONNX Runtime keeps a usage database open for the life of the process (under
    # ~/.cache/Microsoft/DeveloperTools) unless this is set when it first loads a model.
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the vector cache: not the user's
    int8_graph(tmp_path / "mcpmount" / "vectors")  # the model loads; its build is tested apart
    lexical_only = Registry()
    async with lexical_only:
        await lexical_only.mount("calc", fixture(defer=True))
        assert names(lexical_only, QUERY) == []
    async with Registry(RegistrySettings(semantic_model="minilm-int8")) as registry:
        await registry.mount("calc", fixture(defer=True))
        for row in registry.status():
            if row.pid is not None:
                record_group(row.pid)
        with anyio.fail_after(45):  # a never-hangs bound: the vectors take well under a second
            while names(registry, QUERY)[:1] != ["calc__add"]:
                await anyio.sleep(0.05)
        assert list((tmp_path / "mcpmount" / "vectors").glob("*.vectors"))  # kept for the next run
        result = await registry.call("tool_search", {"query": QUERY})
        assert result.structured_content is not None
        assert result.structured_content["tools"][0]["name"] == "calc__add"


async def test_wait_search_ready_returns_once_search_ranks_by_meaning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """Awaited right after the mount, it returns with the paraphrase ranked by meaning,
    having told how many tool texts waited; without a model, or once ready, at once."""
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    int8_graph(tmp_path / "mcpmount" / "vectors")
    async with Registry() as lexical_only:
        await lexical_only.mount("calc", fixture(defer=True))
        await lexical_only.wait_search_ready()
        assert names(lexical_only, QUERY) == []
    async with Registry(RegistrySettings(semantic_model="minilm-int8")) as registry:
        await registry.mount("calc", fixture(defer=True))
        for row in registry.status():
            if row.pid is not None:
                record_group(row.pid)
        told: list[int] = []
        with anyio.fail_after(45):  # a never-hangs bound, as above
            await registry.wait_search_ready(told.append)
        assert names(registry, QUERY)[:1] == ["calc__add"]
        assert 0 < told[0] <= len(registry.mounted_tools())
        told.clear()
        await registry.wait_search_ready(told.append)
        assert told == []


async def test_a_registry_with_a_redis_cache_shares_its_tool_vectors_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """With ``cache = "redis://..."`` the vectors computed at mount are kept in that Redis."""
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    int8_graph(tmp_path / "mcpmount" / "vectors")
    async with running_redis() as server:
        settings = RegistrySettings(semantic_model="minilm-int8", cache=server.url)
        async with Registry(settings) as registry:
            await registry.mount("calc", fixture(defer=True))
            for row in registry.status():
                if row.pid is not None:
                    record_group(row.pid)
            with anyio.fail_after(45):  # a never-hangs bound, as above
                while names(registry, QUERY)[:1] != ["calc__add"]:
                    await anyio.sleep(0.05)
            mounted = len(registry.mounted_tools())
        client: Any = redis.Redis(unix_socket_path=str(server.socket))  # its stubs: partly Unknown
        with client:
            shared = len(client.keys("mcpmount:vectors:*"))
        assert shared == mounted > 0
