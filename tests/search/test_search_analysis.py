"""Text analysis: words to terms, the same for tools and queries, with no shared state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpmount.search import STOP_WORDS, Analyzer, stem, tokenize


class TestTokens:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("readFile", ["read", "fil"]),
            ("read_file", ["read", "fil"]),
            ("read-file", ["read", "fil"]),
            ("read.file", ["read", "fil"]),
            ("getHTTPResponse", ["get", "http", "respons"]),
            ("ec2Instances", ["ec", "2", "instanc"]),
            ("github__create_issue", ["github", "creat", "issu"]),
        ],
    )
    def test_names_split_on_separators_camel_case_and_digits(
        self, text: str, expected: list[str]
    ) -> None:
        """``_ - .``, camelCase humps and letter/digit boundaries separate words."""
        assert tokenize(text) == expected

    def test_stop_words_and_single_letters_are_dropped(self) -> None:
        """Words that say nothing about a tool, and stray letters, give no terms."""
        assert {"the", "please", "use"} <= STOP_WORDS
        assert "down" not in STOP_WORDS
        assert tokenize("Please use the x tool to shut down a VM") == ["tool", "shut", "down", "vm"]

    @pytest.mark.parametrize(
        ("words", "stem_"),
        [
            (["create", "created", "creating", "creation", "creates"], "creat"),
            (["file", "files"], "fil"),
            (["directory", "directories"], "directory"),
            (["stop", "stopped", "stopping", "stops"], "stop"),
            (["commit", "commits", "committed"], "commit"),
        ],
    )
    def test_inflections_share_a_stem(self, words: list[str], stem_: str) -> None:
        """The stemmer conflates the inflections tool text and queries mix."""
        assert {stem(w) for w in words} == {stem_}


class TestAnalyzer:
    @settings(max_examples=300, deadline=None)
    @given(text=st.text(max_size=120))
    def test_an_analyzer_gives_the_terms_tokenize_gives(self, text: str) -> None:
        """The cache changes the cost, never the terms, for any text."""
        analyzer = Analyzer()
        assert list(analyzer.tokenize(text)) == tokenize(text)
        assert list(analyzer.tokenize(text)) == tokenize(text)  # now from the cache

    def test_its_cache_is_its_own_and_bounded(self) -> None:
        """Two analyzers share nothing, and one stops remembering words at its bound."""
        first, second = Analyzer(), Analyzer(max_cached_words=3)
        first.tokenize("list open tickets")
        assert (len(first), len(second)) == (3, 0)
        assert second.tokenize("one two three four five") == ("one", "two", "three", "four", "fiv")
        assert len(second) == 3
        assert len(first) == 3
