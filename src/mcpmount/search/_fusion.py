"""Reciprocal rank fusion: one ranking from several, by rank alone (no scores, no tuning).

`fuse` is the method; `fuse_rankings` is how a search uses it: the word ranking's top and the
meaning ranking's top, fused, then the rest of the word ranking for a longer ``limit``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Final, TypeVar

__all__ = ["RRF_K", "fuse", "fuse_rankings", "semantic_depth"]

RRF_K: Final = 60
"""The constant of Cormack, Clarke and Buettcher (SIGIR 2009), used as published."""

_T = TypeVar("_T", bound=Hashable)

_FUSED_DEPTH = 10
"""How many of each ranking (lexical, semantic) reciprocal rank fusion reads; a longer
``limit`` is filled from the word ranking. Chosen on the tuning queries of
``tests/search_eval/eval_data.py`` alone, among 10, 20 and 50: recall@5 at 10,000 tools
1.000, 1.000 and 0.988, at 1,000 tools 1.000, 0.988 and 0.988. A deeper list adds more
tools that both rankings place low, whose two small shares together outrank one ranking's
first choice."""
_HIDDEN_DEPTH: Final = 50
"""How deep the meaning ranking goes when some servers are not searched (their tools are
dropped from it, and the fusion still reads `_FUSED_DEPTH`)."""


def fuse(rankings: Sequence[Sequence[_T]], k: int = RRF_K) -> list[_T]:
    """Order the items of ``rankings`` (each best first) by the sum of ``1 / (k + rank)``.

    Rank counts from 1; an item absent from a ranking gets nothing from it. Ties keep the
    order in which the items were first met, rankings taken in turn, so the result is
    deterministic.
    """
    scores: dict[_T, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


def semantic_depth(*, hidden: bool) -> int:
    """How deep to ask the meaning ranking (deeper when some servers' tools will be dropped)."""
    return _HIDDEN_DEPTH if hidden else _FUSED_DEPTH


def fuse_rankings(
    nearest: Sequence[int],
    scores: Mapping[int, float],
    depth: int,
    name: Callable[[int], str],
) -> list[int]:
    """The hybrid order of tool ids: ``nearest`` (by meaning, best first) fused with the word
    ranking of ``scores`` (ties by ``name``), then the rest of the word ranking up to
    ``depth``.

    Ties (first of one ranking and second of the other, say) go to the semantic order:
    chosen on the tuning queries alone (recall@1 at 10,000 tools 0.845 with ties to the
    words, 0.869 to meaning; recall@5 1.000 either way).
    """
    lexical: list[int] = []
    if scores:
        depth = max(_FUSED_DEPTH, depth)
        cut = heapq.nlargest(depth, scores.values())[-1]
        lexical = heapq.nsmallest(  # many may tie at the cut: no full sort
            depth,
            (i for i, s in scores.items() if s >= cut),
            key=lambda i: (-scores[i], name(i)),
        )
    fused = fuse((nearest[:_FUSED_DEPTH], lexical[:_FUSED_DEPTH])) + lexical[_FUSED_DEPTH:]
    return list(dict.fromkeys(fused))
