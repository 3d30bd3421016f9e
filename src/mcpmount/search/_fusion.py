"""Reciprocal rank fusion: one ranking from several, by rank alone (no scores, no tuning)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Final, TypeVar

__all__ = ["RRF_K", "fuse"]

RRF_K: Final = 60
"""The constant of Cormack, Clarke and Buettcher (SIGIR 2009), used as published."""

_T = TypeVar("_T", bound=Hashable)


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
