"""Fused ranking against lexical alone on the held-out and reference sets.

Fusion with the semantic model must not lose to the word ranking on phrasing that was never
tuned on. At 1,000 tools (the tool vectors of 10,000 take minutes on a small machine; the
figures at 10,000 come from ``tests/bench/bench_search.py``), measured with fusion of the
top 10 of each ranking: held-out recall@1 0.616 -> 0.663, recall@5 0.872 -> 0.930;
reference recall@1 0.612 -> 0.629, recall@5 0.759 -> 0.879. The floors sit well under
those: they catch a collapse, they are not targets. Needs the ``semantic`` extra (the ``dev``
extra installs it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mcpmount.search import SearchIndex
from mcpmount.tool import MountedTool
from search_eval.eval_data import Query, eval_corpus, report
from search_eval.heldout_data import HELDOUT
from search_eval.reference_data import REFERENCE_QUERIES, reference_corpus

TOOLS = 1_000
FUSED_AT_5_FLOOR = 0.78

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),  # the tool vectors: tens of seconds on a loaded box
]


def indexes(tools: list[MountedTool], cache: Path) -> tuple[SearchIndex, SearchIndex]:
    lexical = SearchIndex()
    lexical.add(tools)
    fused = SearchIndex(semantic_model="minilm-int8", vector_cache=cache)
    fused.add(tools)
    while fused.embed_pending():
        pass
    return lexical, fused


@pytest.mark.parametrize(
    ("name", "corpus", "queries"),
    [("held-out", eval_corpus, HELDOUT), ("reference", reference_corpus, REFERENCE_QUERIES)],
)
def test_fused_recall_is_at_least_lexical_recall(
    name: str,
    corpus: Callable[[int], list[MountedTool]],
    queries: tuple[Query, ...],
    tmp_path: Path,
    int8_graph: Callable[[Path], Path],
) -> None:
    """recall@1 and recall@5 fused >= lexical alone, and recall@5 fused >= 0.78."""
    lexical, fused = indexes(corpus(TOOLS), int8_graph(tmp_path))
    lex1, lex5, lex_text = report(lexical, f"{name} lexical", queries)
    fused1, fused5, fused_text = report(fused, f"{name} fused", queries)
    print(lex_text.splitlines()[0], fused_text.splitlines()[0], sep="\n")  # noqa: T201 -- pytest -s
    assert fused1 >= lex1, fused_text
    assert fused5 >= lex5, fused_text
    assert fused5 >= FUSED_AT_5_FLOOR, fused_text
