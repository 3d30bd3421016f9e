"""Hubness reduction for the semantic ranking: how crowded each tool's neighbourhood is.

Among thousands of tool vectors some sit in crowded regions (a family of tools that differ
in one word, a server whose every description shares a paragraph) and come out near to
almost any query: "hubs", which push the right tool out of the top five. The cross-domain
similarity local scaling of Conneau et al. (ICLR 2018, "Word translation without parallel
data") corrects for it: a tool's score for a query is ``2 cos(q, t) - r(t)``, ``r(t)`` the
mean cosine of ``t`` with its `K` nearest other tools (the published ``K`` = 10, not tuned;
the query's own ``r(q)`` is the same for every tool and drops out of a ranking).

`Neighbourhoods` keeps each text's nearest others across changes, so a change of a few
tools costs the rows it touches, not the whole ``n x n``: the new texts' rows, the rows
that lost a neighbour (about ten per text gone), and a merge of the new texts into the
rows they come near. At 10,000 tools the first computation takes 1.6 s of CPU and a
20-tool change 60-80 ms (``tests/bench/bench_search.py --semantic``), both in the worker
thread that computes the tool vectors, while search goes on with the previous values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from mcpmount.semantic._embedding import Vectors

__all__ = ["K", "Neighbourhoods"]

K = 10
"""Nearest other tools averaged into a tool's crowding, as published."""

_CHUNK = 1024
"""Rows per product: bounds the ``chunk x n`` similarity block (40 MB at 10,000 tools)."""

_Keys = npt.NDArray[np.uint64]


class Neighbourhoods:
    """The `K` nearest other texts of each text (by cosine of unit vectors), kept across
    changes of the set. One thread at a time."""

    __slots__ = ("_k", "_nearest", "_rows")

    def __init__(self) -> None:
        self._k = 0
        self._rows: dict[int, int] = {}
        """Text key -> its row in ``_nearest``, for the set last computed."""
        self._nearest: tuple[Vectors, _Keys] = (np.zeros((0, 0), np.float32), _keys([]))
        """The cosines of each row's nearest others, and their text keys."""

    def update(self, vectors: Mapping[int, Vectors]) -> dict[int, float]:
        """Bring the neighbourhoods to the texts of ``vectors`` (text key -> unit vector);
        return each text's crowding ``r(t)``: the mean cosine of its nearest others."""
        keys = list(vectors)
        k = min(K, len(keys) - 1)
        if k <= 0:
            self._k, self._rows = 0, {}
            return dict.fromkeys(keys, 0.0)
        matrix = np.ascontiguousarray(np.stack([vectors[key] for key in keys]), np.float32)
        all_keys = _keys(keys)
        old_rows, (old_sims, old_keys) = self._rows, self._nearest
        added = [at for at, key in enumerate(keys) if key not in old_rows]
        removed = len(old_rows) - (len(keys) - len(added))
        sims = np.empty((len(keys), k), np.float32)
        near = np.empty((len(keys), k), np.uint64)
        if k != self._k or len(added) + removed > len(keys) // 2:
            redo = list(range(len(keys)))
        else:
            kept = [at for at, key in enumerate(keys) if key in old_rows]
            before = np.array([old_rows[keys[at]] for at in kept], np.int64)
            gone = np.setdiff1d(old_keys[before].ravel(), all_keys) if removed else _keys([])
            lost = np.asarray(np.isin(old_keys[before], gone).any(axis=1), np.bool_)
            flags: list[bool] = lost.tolist()
            redo = added + [at for at, lose in zip(kept, flags, strict=True) if lose]
            merge = [at for at, lose in zip(kept, flags, strict=True) if not lose]
            rows = before[~lost]
            sims[merge], near[merge] = old_sims[rows], old_keys[rows]
            if added and merge:
                fresh = matrix[merge] @ matrix[added].T
                # Only the rows that one of the new texts comes nearer than their farthest.
                closer = np.flatnonzero(fresh.max(axis=1) > old_sims[rows].min(axis=1))
                at = np.asarray(merge, np.int64)[closer]
                both_sims = np.concatenate([old_sims[rows[closer]], fresh[closer]], axis=1)
                both_keys = np.concatenate(
                    [
                        old_keys[rows[closer]],
                        np.broadcast_to(all_keys[added], (len(closer), len(added))),
                    ],
                    axis=1,
                )
                sims[at], near[at] = _top(both_sims, both_keys, k)
        for start in range(0, len(redo), _CHUNK):
            at = redo[start : start + _CHUNK]
            block = matrix[at] @ matrix.T
            block[np.arange(len(at)), at] = -np.inf  # a text is not its own neighbour
            sims[at], near[at] = _top(block, np.broadcast_to(all_keys, block.shape), k)
        self._k = k
        self._rows = {key: at for at, key in enumerate(keys)}
        self._nearest = (sims, near)
        return dict(zip(keys, sims.mean(axis=1).tolist(), strict=True))


def _keys(keys: Sequence[int]) -> _Keys:
    return np.array(keys, np.uint64)


def _top(sims: Vectors, keys: npt.NDArray[np.uint64], k: int) -> tuple[Vectors, _Keys]:
    """Each row's ``k`` largest ``sims`` and their ``keys`` (in no particular order)."""
    at = np.argpartition(sims, -k, axis=1)[:, -k:]
    return np.take_along_axis(sims, at, axis=1), np.take_along_axis(keys, at, axis=1)
