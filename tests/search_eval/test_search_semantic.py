"""Semantic ranking fused into `SearchIndex`, over the real servers' tools of ``eval_data``.

Needs the ``semantic`` extra (the ``dev`` extra installs it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from mcpmount.search import SearchIndex, call_tool_search, run_tool_search
from search_eval.eval_data import REAL_TOOLS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),  # each index loads the model: seconds of CPU if loaded
]

PARAPHRASE = "print everything the memory store holds"
"""Shares no content word with the memory server's ``read_graph`` ("Read the entire
knowledge graph"), which the word ranking alone does not put in its top five."""


def names(index: SearchIndex, query: str, limit: int = 5) -> list[str]:
    return [hit.tool.name for hit in index.search(query, limit).hits]


@pytest.fixture(scope="module", name="lexical")
def _lexical() -> SearchIndex:
    index = SearchIndex()
    index.add(REAL_TOOLS)
    return index


@pytest.fixture(scope="module", name="fused")
def _fused(
    tmp_path_factory: pytest.TempPathFactory, int8_graph: Callable[[Path], Path]
) -> SearchIndex:
    index = SearchIndex(
        semantic_model="minilm-int8", vector_cache=int8_graph(tmp_path_factory.mktemp("fused"))
    )
    index.add(REAL_TOOLS)
    while index.embed_pending():
        pass
    return index


def test_the_fused_ranking_finds_a_paraphrase_the_words_miss(
    lexical: SearchIndex, fused: SearchIndex
) -> None:
    """The semantic half brings the right tool first where the word ranking misses it."""
    assert "memory__read_graph" not in names(lexical, PARAPHRASE)
    assert names(fused, PARAPHRASE)[0] == "memory__read_graph"


def test_exact_names_select_and_required_words_stay_as_they_were(
    lexical: SearchIndex, fused: SearchIndex
) -> None:
    """A tool's exact name first, ``select:`` exactly, ``+word`` lexical, name prefixes next."""
    assert names(fused, "git_log")[0] == "git__git_log"
    assert names(fused, "fetch")[0] == "fetch__fetch"
    assert names(fused, "select:time__convert_time,fetch__fetch") == [
        "time__convert_time",
        "fetch__fetch",
    ]
    for query in ("+memory delete", "+github issue comment", "github__"):
        assert names(fused, query, 10) == names(lexical, query, 10), query


def test_search_is_lexical_until_every_vector_is_ready(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """Before its vectors are computed, and after a new tool arrives, the index ranks by words."""
    lexical = SearchIndex()
    lexical.add(REAL_TOOLS)
    index = SearchIndex(semantic_model="minilm-int8", vector_cache=int8_graph(tmp_path))
    index.add(REAL_TOOLS[:-1])
    assert index.vectors_pending == len(REAL_TOOLS) - 1
    assert index.embed_pending() is True  # one batch done, more wait
    assert index.vectors_pending > 0
    while index.embed_pending():
        pass
    assert index.vectors_pending == 0
    index.add(REAL_TOOLS[-1:])  # one new tool without a vector
    assert index.vectors_pending == 1
    assert names(index, PARAPHRASE) == names(lexical, PARAPHRASE)
    assert index.embed_pending() is False
    assert names(index, PARAPHRASE)[0] == "memory__read_graph"
    index.remove([REAL_TOOLS[0].name])
    index.add(REAL_TOOLS[:1])  # back unchanged: its vector is reused, nothing to compute
    assert index.vectors_pending == 0
    assert names(index, PARAPHRASE)[0] == "memory__read_graph"


async def test_a_new_query_runs_the_model_in_a_worker_thread(fused: SearchIndex) -> None:
    """While the model runs on a new query, the event loop goes on running other tasks; a
    query seen before, a ``select:`` and a ``+word`` query never leave the loop."""
    ticks = 0
    stop = anyio.Event()

    async def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async def ticks_during(query: str) -> int:
        before = ticks
        outcome = await run_tool_search(fused, {"query": query})
        assert outcome.result == call_tool_search(fused, {"query": query}).result
        return ticks - before

    query = "which tool prints what the memory store holds, asked only here"
    assert fused.query_needs_vector(query)
    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        await anyio.lowlevel.checkpoint()
        assert await ticks_during(query) > 0
        assert not fused.query_needs_vector(query)
        for quick in (query, "select:fetch__fetch", "+memory delete"):
            assert not fused.query_needs_vector(quick)
            assert await ticks_during(quick) == 0
        stop.set()


def test_a_long_limit_is_filled_from_the_word_ranking(
    lexical: SearchIndex, fused: SearchIndex
) -> None:
    """Fusion reads the top 10 of each ranking; a limit of 20 still gets as many hits as the
    word ranking has, and its first five are those of a limit of 5."""
    for query in ("list files in a directory", "create or update an issue", PARAPHRASE):
        assert len(lexical.search(query, 20).hits) == 20, query
        assert len(fused.search(query, 20).hits) == 20, query
        assert names(fused, query, 20)[:5] == names(fused, query, 5), query


def semantic_ranking(index: SearchIndex, query: str) -> list[str]:
    ranker = index._semantic  # pyright: ignore[reportPrivateUsage]
    assert ranker is not None
    found = ranker.rank(query, 10)
    assert found is not None, "the semantic ranking is ready"
    docs = index._postings.docs  # pyright: ignore[reportPrivateUsage]
    return [docs[i].tool.name for i in found]


def test_after_a_server_leaves_the_ranking_is_the_one_its_tools_never_joined(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """Crowding (how near a tool sits to its nearest others) is brought up to date in the
    background after a change: once it is, nothing of the removed tools remains in any
    score. Until then the previous values serve, so search never falls back to words."""
    queries = ("print everything the memory store holds", "stage files", "what time is it")
    others = [t for t in REAL_TOOLS if t.server != "github"]
    changed = SearchIndex(semantic_model="minilm-int8", vector_cache=int8_graph(tmp_path))
    changed.add(REAL_TOOLS)
    while changed.embed_pending():
        pass
    changed.remove(t.name for t in REAL_TOOLS if t.server == "github")
    assert changed.vectors_pending == 1  # the crowding of the new set
    assert semantic_ranking(changed, queries[0])  # served meanwhile
    assert changed.embed_pending() is False
    assert changed.vectors_pending == 0
    fresh = SearchIndex(semantic_model="minilm-int8", vector_cache=tmp_path)
    fresh.add(others)
    while fresh.embed_pending():
        pass
    assert fresh.vectors_computed == 0  # the same vectors, from the first index's cache
    for query in queries:
        assert semantic_ranking(changed, query) == semantic_ranking(fresh, query)


def test_tools_that_share_a_text_share_a_vector_and_both_rank(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """Two servers listing the same tool: one vector, one row of the scan, and both tools in
    the ranking, the first added first; the copy leaving keeps the other."""
    original = next(t for t in REAL_TOOLS if t.name == "memory__read_graph")
    copy = dataclasses.replace(original, name="backup__read_graph", server="backup")
    index = SearchIndex(semantic_model="minilm-int8", vector_cache=int8_graph(tmp_path))
    index.add([*REAL_TOOLS, copy])
    while index.embed_pending():
        pass
    assert index.vectors_computed == len(REAL_TOOLS)  # not one more for the copy
    top = semantic_ranking(index, PARAPHRASE)
    at = top.index("memory__read_graph")
    assert top[at + 1] == "backup__read_graph"
    index.remove(["memory__read_graph"])
    assert index.vectors_pending == 0  # the text is still indexed: nothing to redo
    assert semantic_ranking(index, PARAPHRASE)[at] == "backup__read_graph"
