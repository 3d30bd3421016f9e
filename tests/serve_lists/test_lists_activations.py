"""The activation store: the in-memory default, and the front using the store it is given.

Two fronts sharing one store stand in for replicas sharing one (Redis): a conversation's
search on one is in its list on the other. A store that fails leaves lists and searches
working, with a warning.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest

from mcpmount.config import RegistrySettings
from mcpmount.serve import ActivationStore, Host, InMemoryActivations
from mcpmount.serve.front import open_front
from serve.serve_support import BEHAVIOUR, STARTUP, names
from serve_lists.lists_support import client_of
from support import fixture

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


class TestInMemoryActivations:
    async def test_names_keep_their_first_order_once_each(self) -> None:
        """add appends only new names, in order; load copies."""
        store = InMemoryActivations()
        await store.add("conv:a", ["x__one", "x__two"])
        await store.add("conv:a", ["x__two", "x__three", "x__three"])
        loaded = await store.load("conv:a")
        assert loaded == ["x__one", "x__two", "x__three"]
        loaded.append("x__four")
        assert await store.load("conv:a") == ["x__one", "x__two", "x__three"]
        assert await store.load("conv:unknown") == []

    async def test_the_least_recently_used_conversation_is_forgotten_first(self) -> None:
        """At max_keys, using a key keeps it; the oldest unused one goes."""
        store = InMemoryActivations(max_keys=2)
        await store.add("conv:a", ["x__a"])
        await store.add("conv:b", ["x__b"])
        assert await store.load("conv:a") == ["x__a"]  # a is now the most recent
        await store.add("conv:c", ["x__c"])
        assert await store.load("conv:b") == []
        assert await store.load("conv:a") == ["x__a"]
        assert await store.load("conv:c") == ["x__c"]

    async def test_nothing_is_kept_for_nothing_found_and_a_string_is_refused(self) -> None:
        """An empty add makes no entry (so it evicts nobody); a bare string is a mistake."""
        store = InMemoryActivations(max_keys=1)
        await store.add("conv:a", ["x__a"])
        await store.add("conv:b", [])
        assert await store.load("conv:a") == ["x__a"]
        with pytest.raises(TypeError):
            await store.add("conv:a", "x__b")
        with pytest.raises(ValueError, match="max_keys"):
            InMemoryActivations(max_keys=0)


class Recording:
    """An `ActivationStore` that records what the front asks of it (or fails every time)."""

    def __init__(self, *, failing: bool = False) -> None:
        self.inner = InMemoryActivations()
        self.failing = failing
        self.asked: list[tuple[str, str]] = []

    async def load(self, key: str) -> list[str]:
        self.asked.append(("load", key))
        if self.failing:
            raise ConnectionError("the store is down")
        return await self.inner.load(key)

    async def add(self, key: str, names: Sequence[str]) -> None:
        self.asked.append(("add", key))
        if self.failing:
            raise ConnectionError("the store is down")
        await self.inner.add(key, names)


@asynccontextmanager
async def front_url(store: ActivationStore) -> AsyncGenerator[str]:
    """A front over a registry with one deferred server, on HTTP, using ``store``."""
    stop = anyio.Event()
    async with open_front(RegistrySettings(), activations=store) as front:
        with anyio.fail_after(STARTUP):
            await front.registry.mount("one", fixture(defer=True))
        async with anyio.create_task_group() as tg:

            async def run(*, task_status: anyio.abc.TaskStatus[str]) -> None:
                await Host(front).run_http(stop, on_ready=task_status.started)

            with anyio.fail_after(STARTUP):
                url = await tg.start(run)
            try:
                yield url
            finally:
                stop.set()


@pytest.mark.usefixtures("no_leaks")
async def test_two_fronts_sharing_a_store_share_a_conversations_finds() -> None:
    """A search through one front is in the conversation's list on the other, not elsewhere."""
    store = Recording()
    async with front_url(store) as first, front_url(store) as second:
        async with client_of(first, conversation="c-1") as client:
            with anyio.fail_after(BEHAVIOUR):
                await client.call_tool("tool_search", {"query": "select:one__add"})
        assert await store.inner.load("conv:c-1") == ["one__add"]
        async with (
            client_of(second, conversation="c-1") as same,
            client_of(second, conversation="c-2") as other,
        ):
            with anyio.fail_after(BEHAVIOUR):
                assert "one__add" in names(await same.list_tools())
                assert "one__add" not in names(await other.list_tools())
    assert ("add", "conv:c-1") in store.asked
    assert {key for _, key in store.asked} == {"conv:c-1", "conv:c-2"}


@pytest.mark.usefixtures("no_leaks")
async def test_a_failing_store_leaves_lists_and_searches_working(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The manifest is listed and the search answers; the store's failure is a warning."""
    store = Recording(failing=True)
    async with front_url(store) as url, client_of(url, conversation="c-1") as client:
        with anyio.fail_after(BEHAVIOUR):
            found = await client.call_tool("tool_search", {"query": "select:one__add"})
            listed = names(await client.list_tools())
    assert not found.is_error
    assert "one__add" not in listed
    assert "call_tool" in listed
    assert ("load", "conv:c-1") in store.asked
    assert "the store failed" in caplog.text


@pytest.mark.usefixtures("no_leaks")
async def test_a_python_format_search_activates_nothing() -> None:
    """Stubs are read to write a ``run_code`` program: the conversation's list stays as it
    was, nothing is stored, and no line sends the model to ``call_tool``."""
    store = Recording()
    async with front_url(store) as url, client_of(url, conversation="c-1") as client:
        query = {"query": "select:one__add", "format": "python"}
        with anyio.fail_after(BEHAVIOUR):
            found = await client.call_tool("tool_search", query)
            listed = names(await client.list_tools())
    text = "".join(getattr(block, "text", "") for block in found.content)
    assert "def add(" in text
    assert "call_tool" not in text
    assert "one__add" not in listed
    assert ("add", "conv:c-1") not in store.asked
