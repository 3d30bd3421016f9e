"""Recall of `SearchIndex` on the labelled set: real servers' tools among 10,000 tools."""

from __future__ import annotations

from eval_data import QUERIES, recall

from mcpmount.search import SearchIndex

RECALL_AT_5_FLOOR = 0.9


def test_the_evaluation_set_is_large_enough_and_labels_only_indexed_tools(
    index: SearchIndex,
) -> None:
    """Sixty or more queries, each labelled with tools that exist in the corpus."""
    assert len(index) == 10_000
    assert len(QUERIES) >= 60
    indexed = {
        hit.tool.name
        for q in QUERIES
        for t in q.targets
        for hit in index.search(f"select:{t}").hits
    }
    assert {t for q in QUERIES for t in q.targets} == indexed


def test_recall_at_5_stays_above_the_floor_among_10000_tools(index: SearchIndex) -> None:
    """recall@5 >= 0.9 over the labelled queries (targets: @5 >= 0.95, @1 >= 0.8)."""
    at1, misses1 = recall(index, QUERIES, 1)
    at5, misses5 = recall(index, QUERIES, 5)
    report = (
        f"recall@1={at1:.3f} recall@5={at5:.3f} over {len(QUERIES)} queries\n"
        "missed @5:\n  " + "\n  ".join(misses5) + "\nmissed @1:\n  " + "\n  ".join(misses1)
    )
    print(report)  # noqa: T201 -- the figures are the point of this test (pytest -s)
    assert at5 >= RECALL_AT_5_FLOOR, report
