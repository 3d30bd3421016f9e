"""Incremental updates and boilerplate: a change costs its own tools, never the order of changes."""

from __future__ import annotations

import random
from dataclasses import replace

import mcp_types
import pytest
from search_support import make

from mcpmount.search import SearchIndex
from mcpmount.search._postings import WEIGHT_STEPS, Postings, boilerplate_weight
from mcpmount.tool import MountedTool

pytestmark = pytest.mark.slow

_WORDS = (
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"),
    *("sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"),
)


def _corpus(count: int, seed: int) -> list[MountedTool]:
    rng = random.Random(seed)
    return [
        make(
            f"srv{i % 7}",
            f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{i}",
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))),
            {rng.choice(_WORDS): " ".join(rng.sample(_WORDS, 3))},
        )
        for i in range(count)
    ]


def _reworded(tool: MountedTool, word: str) -> MountedTool:
    """``tool`` with its first description word replaced: same lengths, other text."""
    description = tool.definition.description or ""
    _, _, rest = description.partition(" ")
    definition = tool.definition.model_copy(update={"description": f"{word} {rest}".strip()})
    return replace(tool, definition=definition)


def _ranking(index: SearchIndex, query: str) -> list[tuple[str, float]]:
    return [(hit.tool.name, hit.score) for hit in index.search(query, 20).hits]


class TestIncrementalUpdates:
    @pytest.mark.parametrize("seed", range(4))
    def test_after_any_changes_search_answers_as_a_fresh_index_of_the_same_tools(
        self, seed: int
    ) -> None:
        """Adds, removes and replacements in any order, searched between, then every query
        ranks and scores as an index built once from the tools left."""
        rng = random.Random(seed)
        pool = _corpus(400, seed)
        index = SearchIndex()
        live: dict[str, MountedTool] = {}
        for _ in range(12):
            added = rng.sample(pool, rng.randint(1, 60))
            index.add(added)
            live.update((t.name, t) for t in added)
            gone = rng.sample(sorted(live), rng.randint(0, min(40, len(live))))
            index.remove(gone)
            for name in gone:
                del live[name]
            if live:
                picked = rng.sample(sorted(live), min(3, len(live)))
                changed = [_reworded(live[n], rng.choice(_WORDS)) for n in picked]
                index.add(changed)
                live.update((t.name, t) for t in changed)
            index.search(rng.choice(_WORDS))
        fresh = SearchIndex()
        fresh.add(live.values())
        for query in ["alpha", "bravo charlie", "zulu kilo mike", "srv3", "hotel_india", *_WORDS]:
            assert _ranking(index, query) == _ranking(fresh, query), query

    def test_a_change_of_twenty_tools_derives_those_tools_not_the_index(self) -> None:
        """Replacing 20 of 2,000 tools re-derives 20 tools' statistics, however many are indexed."""
        tools = _corpus(2_000, 7)
        index = SearchIndex()
        index.add(tools)
        index.search("alpha")
        postings: Postings = index._postings  # pyright: ignore[reportPrivateUsage]
        assert postings.derived == 2_000
        picked = tools[::100]
        index.remove(t.name for t in picked)
        index.add(_reworded(t, "changed") for t in picked)
        assert index.search("changed").hits
        assert postings.derived == 20


class TestBoilerplate:
    def test_the_weight_is_whole_up_to_half_a_server_and_never_below_one_step(self) -> None:
        """min(1, 2 * (1 - holders / (tools + 1))) in whole steps, at least one."""
        assert boilerplate_weight(1, 1) == WEIGHT_STEPS
        assert boilerplate_weight(5, 10) == WEIGHT_STEPS
        assert boilerplate_weight(10, 10) == 2
        assert boilerplate_weight(1_000, 1_000) == 1
        assert boilerplate_weight(2, 2) < WEIGHT_STEPS

    def test_a_word_one_server_repeats_in_every_tool_does_not_look_common_to_others(
        self,
    ) -> None:
        """The same thirty tools saying "existing" make the word count for less when one
        server repeats it than when thirty servers each say it once; so the real tool that
        says it gets more for it."""
        real = make("memory", "add_observations", "Add observations to existing entities.")

        def score(servers: list[str]) -> float:
            index = SearchIndex()
            index.add(
                make(server, f"update_thing_{i}", f"Update an existing thing number {i}.")
                for i, server in enumerate(servers)
            )
            index.add([real] + [make(f"other{i}", f"tool_{i}", "Unrelated.") for i in range(60)])
            hits = {hit.tool.name: hit.score for hit in index.search("existing", 20).hits}
            return hits["memory__add_observations"]

        assert score(["generated"] * 30) > score([f"server{i}" for i in range(30)]) * 1.2

    def test_name_and_title_hits_count_whole_even_for_a_repeated_word(self) -> None:
        """A server whose every tool is named after its product still has the product word
        count whole in the document frequency, so its idf is as without boilerplate."""
        index = SearchIndex()
        index.add(make("gh", f"github_tool_{i}", "Does a thing.") for i in range(10))
        index.add(make("x", f"other_{i}", "Unrelated.") for i in range(30))
        index.search("github")
        postings: Postings = index._postings  # pyright: ignore[reportPrivateUsage]
        assert postings.df["github"] == 10 * WEIGHT_STEPS


def test_a_tool_without_fields_text_is_indexed_and_removed() -> None:
    """A tool with no description, title or arguments adds only its name, and goes cleanly."""
    bare = MountedTool(
        "ns__x1", "ns", "x1", mcp_types.Tool(name="x1", input_schema={"type": "object"}), True
    )
    index = SearchIndex()
    index.add([bare, make("ns", "read_file", "Read a file.")])
    assert [h.tool.name for h in index.search("x1").hits] == ["ns__x1"]
    index.remove(["ns__x1"])
    assert not index.search("x1").hits
    assert [h.tool.name for h in index.search("read").hits] == ["ns__read_file"]


def test_removing_a_servers_tools_and_adding_them_back_changed_derives_only_the_changes() -> None:
    """How a registry applies a server's new list: all its old tools out, all new ones in.
    Only the tools that differ are derived again, and hits carry the objects added last."""
    tools = _corpus(1_000, 3)
    index = SearchIndex()
    index.add(tools)
    index.search("alpha")
    postings: Postings = index._postings  # pyright: ignore[reportPrivateUsage]
    server = [t for t in tools if t.server == "srv2"]
    again = [replace(t, deferred=True) for t in server]  # equal copies, other objects
    again[:5] = [_reworded(t, "changed") for t in again[:5]]
    index.remove(t.name for t in server)
    index.add(again)
    hits = index.search(f"select:{','.join(t.name for t in again[:20])}").hits
    assert postings.derived == 5
    assert [h.tool for h in hits] == again[:20]
    assert all(h.tool is t for h, t in zip(hits, again, strict=False))


def test_tools_added_and_removed_between_two_searches_leave_no_trace() -> None:
    """Many tools added then removed before any search: their names find nothing, and
    the search does not fail on them; the tools kept are found by name."""
    tools = _corpus(300, 5)
    index = SearchIndex()
    index.add(tools)
    index.remove(t.name for t in tools[::2])
    for tool in tools[:20]:
        result = index.search(tool.name)
        assert result.hint is None or "failed" not in result.hint
        found = [h.tool.name for h in result.hits]
        assert (tool.name in found[:1]) == (tool not in tools[::2])


def test_the_cache_of_query_words_stays_bounded() -> None:
    """Thousands of distinct query words never hold more than the bound, and the answers
    do not change when the cache starts over. (The words go 100 to a query: each is
    looked up and cached as if alone, and a search ranks every tool, so one query per word
    would cost 50 times as much.)"""
    index = SearchIndex()
    index.add(make("ns", f"tool_{i}", f"word{i} thing") for i in range(5_000))
    first = _ranking(index, "word7 thing")
    for start in range(0, 5_000, 100):
        index.search(" ".join(f"word{i}" for i in range(start, start + 100)))
    expanded: dict[str, dict[int, float]] = index._expanded  # pyright: ignore[reportPrivateUsage]
    assert 0 < len(expanded) <= 4096
    assert _ranking(index, "word7 thing") == first
