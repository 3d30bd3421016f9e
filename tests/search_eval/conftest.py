"""The corpus both evaluations search: real servers' tools among 10,000 tools."""

from __future__ import annotations

import pytest

from mcpmount.search import SearchIndex
from search_eval.eval_data import eval_corpus


@pytest.fixture(scope="session", name="index")
def _index() -> SearchIndex:
    index = SearchIndex()
    index.add(eval_corpus(10_000))
    return index
