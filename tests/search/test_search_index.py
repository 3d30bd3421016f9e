"""The tool index: ranking rules, query forms, updates, and no state shared with the process."""

from __future__ import annotations

import gc
import importlib
import pkgutil
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_support import make, names

import mcpmount.search
from mcpmount.search import MAX_LIMIT, SearchIndex


@pytest.fixture(name="index")
def _index() -> SearchIndex:
    index = SearchIndex()
    index.add(
        [
            make("fs", "read_file", "Read the complete contents of a file.", {"path": "File"}),
            make("fs", "write_file", "Write content to a file.", {"path": "File to write"}),
            make("fs", "list_directory", "List files in a directory.", {"path": "Directory"}),
            make("cloud", "stop_instance", "Stop a running virtual machine instance."),
            make("cloud", "start_instance", "Start a stopped virtual machine instance."),
            make("github", "create_issue", "Create a new issue in a GitHub repository."),
            make("github", "list_commits", "List commits of a branch."),
            make("jira", "create_issue", "Create a new issue in a Jira project."),
            make("crm", "update_contact", "Update a contact."),
        ]
    )
    return index


class TestExactNames:
    def test_a_query_equal_to_a_public_name_ranks_that_tool_first(self) -> None:
        """The public name wins even when other tools repeat the query's words more often."""
        index = SearchIndex()
        noisy = "status git status: the git status of git status, status, git " * 3
        index.add(
            [make("vcs", "git_status", "Show the tree.")]
            + [make("noise", f"tool_{i}", noisy, {"git_status": noisy}) for i in range(30)]
        )
        assert names(index, "vcs__git_status")[0] == "vcs__git_status"
        assert names(index, "VCS__GIT_STATUS")[0] == "vcs__git_status"

    def test_a_query_equal_to_a_raw_name_ranks_every_tool_of_that_name_first(
        self, index: SearchIndex
    ) -> None:
        """Raw names are not unique across servers; all exact matches lead, by score."""
        found = names(index, "create_issue")
        assert set(found[:2]) == {"github__create_issue", "jira__create_issue"}

    def test_an_identifier_like_query_ranks_name_prefix_matches_next(self) -> None:
        """``git_diff`` brings the exact tool, then the other ``git_diff*`` tools."""
        index = SearchIndex()
        index.add(
            [
                make("git", "git_diff_staged", "Shows staged changes."),
                make("git", "git_diff", "Shows differences."),
                make("other", "diff_everything", "git diff git diff git diff"),
            ]
        )
        assert names(index, "git_diff")[:2] == ["git__git_diff", "git__git_diff_staged"]


class TestQueryForms:
    def test_select_returns_exactly_the_named_tools_in_the_given_order(
        self, index: SearchIndex
    ) -> None:
        """``select:`` takes public or raw names and keeps the caller's order."""
        result = index.search("select:cloud__stop_instance, read_file,fs__write_file")
        assert [h.tool.name for h in result.hits] == [
            "cloud__stop_instance",
            "fs__read_file",
            "fs__write_file",
        ]
        assert result.hint is None

    def test_select_reports_unknown_names_in_the_hint(self, index: SearchIndex) -> None:
        """Known names come back; unknown ones are named in the hint."""
        result = index.search("select:nope,fs__read_file,also_missing")
        assert [h.tool.name for h in result.hits] == ["fs__read_file"]
        assert result.hint is not None
        assert "'nope'" in result.hint
        assert "'also_missing'" in result.hint

    def test_select_with_no_names_returns_a_hint(self, index: SearchIndex) -> None:
        """``select:`` alone is a usage error, answered with a hint."""
        result = index.search("select: , ")
        assert result.hits == ()
        assert result.hint

    def test_a_plus_word_is_required_in_every_hit(self, index: SearchIndex) -> None:
        """``+github issue`` keeps only github tools, issue tools first."""
        found = names(index, "+github issue")
        assert found[0] == "github__create_issue"
        assert all(name.startswith("github__") for name in found)
        assert "jira__create_issue" in names(index, "issue")

    def test_a_plus_word_that_no_tool_has_gives_a_hint(self, index: SearchIndex) -> None:
        """A missing required word yields no hits and names the word."""
        result = index.search("+gitlab issue")
        assert result.hits == ()
        assert result.hint is not None
        assert "gitlab" in result.hint

    @pytest.mark.parametrize("query", ["", "   ", "\n\t"])
    def test_an_empty_query_returns_no_hits_and_a_hint(
        self, index: SearchIndex, query: str
    ) -> None:
        """Nothing to search for is answered, not raised."""
        result = index.search(query)
        assert result.hits == ()
        assert result.hint

    @pytest.mark.parametrize("query", ["zebra quokka", "!!! ???", "+"])
    def test_an_unmatched_or_wordless_query_returns_no_hits_and_a_hint(
        self, index: SearchIndex, query: str
    ) -> None:
        """No match is an empty result with advice."""
        result = index.search(query)
        assert result.hits == ()
        assert result.hint

    def test_a_paraphrase_reaches_the_tool_through_synonyms_and_stems(
        self, index: SearchIndex
    ) -> None:
        """ "shut down the VMs" finds ``stop_instance``."""
        assert names(index, "shut down the VMs")[0] == "cloud__stop_instance"


class TestRanking:
    def test_a_camel_case_tool_is_found_by_its_spoken_words(self) -> None:
        """``listOpenTickets`` is found by "list open tickets"."""
        index = SearchIndex()
        index.add(
            [
                make("desk", "listOpenTickets"),
                make("desk", "closeTicket"),
                make("desk", "files.read-all"),
            ]
        )
        assert names(index, "list open tickets")[0] == "desk__listOpenTickets"
        assert names(index, "read all files")[0] == "desk__files.read-all"

    def test_ties_break_by_public_name_whatever_the_insertion_order(self) -> None:
        """Equal scores order by name, and results do not depend on add order."""
        tools = [make(f"ns{i}", "ping", "Ping a host.") for i in range(8)]
        expected = sorted(t.name for t in tools)[:5]
        for seed in range(5):
            shuffled = tools[:]
            random.Random(seed).shuffle(shuffled)
            index = SearchIndex()
            index.add(shuffled)
            result = index.search("ping host")
            assert [h.tool.name for h in result.hits] == expected
            assert len({h.score for h in result.hits}) == 1

    def test_scores_do_not_depend_on_insertion_order(self, index: SearchIndex) -> None:
        """The same set of tools gives the same hits and scores."""
        again = SearchIndex()
        tools = [h.tool for h in index.search("select:" + ",".join(all_names(index))).hits]
        again.add(reversed(tools))
        for query in ("file", "issue repository", "stop machine", "list"):
            assert index.search(query, 20) == again.search(query, 20)

    def test_the_name_field_outweighs_the_description(self) -> None:
        """A word in the name beats the same word once in a description."""
        index = SearchIndex()
        index.add([make("a", "archive_report", "Store it."), make("b", "store", "Archive it.")])
        assert names(index, "archive")[0] == "a__archive_report"

    def test_argument_names_and_descriptions_are_searchable(self) -> None:
        """Arguments count: a tool found only through its argument text."""
        index = SearchIndex()
        index.add(
            [
                make("x", "run", "Run it.", {"timezone": "An IANA zone"}),
                make("y", "walk", "Walk it."),
            ]
        )
        assert names(index, "timezone") == ["x__run"]
        assert names(index, "iana") == ["x__run"]


class TestUpdates:
    def test_removed_tools_disappear_and_added_ones_appear(self, index: SearchIndex) -> None:
        """The index follows mounts and unmounts."""
        assert "cloud__stop_instance" in names(index, "stop instance")
        index.remove(["cloud__stop_instance", "cloud__start_instance", "unknown__x"])
        assert len(index) == 7
        assert names(index, "stop instance") == []
        assert names(index, "select:cloud__stop_instance") == []
        index.add([make("cloud", "stop_instance", "Halt a VM.")])
        assert names(index, "stop instance") == ["cloud__stop_instance"]

    def test_re_adding_a_name_replaces_the_tool(self, index: SearchIndex) -> None:
        """The newest definition of a public name is the one indexed."""
        index.add([make("fs", "read_file", "Slurp bytes.")])
        assert len(index) == 9
        assert names(index, "slurp") == ["fs__read_file"]
        assert "fs__read_file" not in names(index, "complete contents")

    def test_an_empty_index_answers_with_a_hint(self) -> None:
        """No tools: no hits, a hint."""
        result = SearchIndex().search("anything")
        assert result.hits == ()
        assert result.hint


class TestLimit:
    @pytest.mark.parametrize(("limit", "expected"), [(-3, 1), (0, 1), (1, 1), (7, 7), (99, 20)])
    def test_limit_is_clamped_to_one_through_twenty(self, limit: int, expected: int) -> None:
        """Out-of-range limits are clamped, not rejected."""
        index = SearchIndex()
        index.add(make("ns", f"ping_{i:02d}", "Ping a host.") for i in range(30))
        assert len(index.search("ping", limit).hits) == expected


def all_names(index: SearchIndex) -> list[str]:
    return [n for q in ("fs", "cloud", "github", "jira", "crm") for n in names(index, q, 20)]


@settings(max_examples=300, deadline=None)
@given(query=st.text(max_size=200), limit=st.integers(min_value=-5, max_value=50))
def test_search_never_raises_on_arbitrary_text(query: str, limit: int) -> None:
    """Any string, including lone surrogates and control characters, gets a result."""
    index = SEARCH_FUZZ_INDEX
    result = index.search(query, limit)
    assert len(result.hits) <= MAX_LIMIT
    assert result.hits or result.hint


SEARCH_FUZZ_INDEX = SearchIndex()
SEARCH_FUZZ_INDEX.add(
    [
        make("fs", "read_file", "Read a file."),
        make("odd", "wéird.näme-ÆØ", "Ünïcode déscription 数据", {"ключ": "значение"}),
        make("git", "git_status", "Show status."),
    ]
)


class TestNoProcessWideState:
    @pytest.mark.parametrize("enabled", [True, False])
    def test_indexing_leaves_the_garbage_collector_as_it_is(self, enabled: bool) -> None:
        """The collector stays on (or off) throughout building and searching: the index
        reads names, here probes that note the collector's state, in both phases."""
        states: dict[str, list[bool]] = {"hash": [], "lower": []}

        class Probe(str):
            __slots__ = ()

            def __hash__(self) -> int:  # the index maps public names to documents
                states["hash"].append(gc.isenabled())
                return super().__hash__()

            def lower(self) -> str:  # names match ignoring case
                states["lower"].append(gc.isenabled())
                return super().lower()

        tools = [make("ns", f"tool_{i}", f"Does thing {i} to a file.") for i in range(50)]
        probes = [replace(t, name=Probe(t.name), raw_name=Probe(t.raw_name)) for t in tools]
        was = gc.isenabled()
        (gc.enable if enabled else gc.disable)()
        try:
            index = SearchIndex()
            index.add(probes)
            hits = index.search("file", 3).hits
        finally:
            (gc.enable if was else gc.disable)()
        assert hits
        assert states["hash"]
        assert states["lower"]
        assert set(states["hash"]) | set(states["lower"]) == {enabled}

    def test_two_indexes_share_no_cache(self) -> None:
        """Each index analyzes text with its own analyzer, whose cache only it fills."""
        first, second = SearchIndex(), SearchIndex()
        assert first.analyzer is not second.analyzer
        first.add([make("fs", "read_file", "Read the complete contents of a file.")])
        assert first.search("read").hits
        assert len(first.analyzer) > 0
        assert len(second.analyzer) == 0

    def test_no_module_of_the_package_holds_mutable_state(self) -> None:
        """Module globals are constants: no dict, list or set a process could share."""
        semantic = importlib.import_module("mcpmount.semantic")  # numpy: the semantic extra
        for package in (mcpmount.search, semantic):
            for info in pkgutil.iter_modules(package.__path__):
                module = importlib.import_module(f"{package.__name__}.{info.name}")
                for name, value in vars(module).items():
                    if not name.startswith("__"):
                        assert not isinstance(value, dict | list | set | bytearray), (
                            f"{module.__name__}.{name}"
                        )


def test_word_search_imports_nothing_of_the_semantic_ranking() -> None:
    """Without a ``semantic_model``, neither ``import mcpmount`` nor indexing and searching
    loads the semantic room or what it needs (numpy, ONNX Runtime, tokenizers)."""
    script = (
        "import sys, mcpmount\n"
        "from mcpmount.search import SearchIndex\n"
        "from search_support import make\n"
        "index = SearchIndex()\n"
        "index.add([make('fs', 'read_file', 'Read a file.')])\n"
        "assert index.search('read').hits\n"
        "heavy = ('mcpmount.semantic', 'numpy', 'onnxruntime', 'onnx', 'tokenizers')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
