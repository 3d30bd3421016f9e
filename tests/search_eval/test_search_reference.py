"""Blind recall of `SearchIndex` over the published reference servers' own tool lists.

``reference_data.REFERENCE_QUERIES`` was written before any result over this corpus was
seen and is kept apart from tuning (see its module docstring). Run
``pytest -s tests/search_eval/test_search_reference.py`` to see the figures.
"""

from __future__ import annotations

import pytest
from eval_data import QUERIES
from heldout_data import HELDOUT
from reference_data import REFERENCE_QUERIES, reference_corpus

from mcpmount.search import SearchIndex


@pytest.fixture(scope="module", name="reference_index")
def _reference_index() -> SearchIndex:
    index = SearchIndex()
    index.add(reference_corpus(10_000))
    return index


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def test_the_reference_set_is_large_new_and_labels_only_indexed_tools(
    reference_index: SearchIndex,
) -> None:
    """A hundred or more distinct queries, none in another set, each labelled with indexed tools."""
    assert len(reference_index) == 10_000
    assert len(REFERENCE_QUERIES) >= 100
    texts = [_normal(q.text) for q in REFERENCE_QUERIES]
    assert len(set(texts)) == len(texts)
    assert not set(texts) & {_normal(q.text) for q in QUERIES + HELDOUT}
    assert all(q.targets for q in REFERENCE_QUERIES)
    indexed = {
        hit.tool.name
        for q in REFERENCE_QUERIES
        for t in q.targets
        for hit in reference_index.search(f"select:{t}").hits
    }
    assert {t for q in REFERENCE_QUERIES for t in q.targets} == indexed
