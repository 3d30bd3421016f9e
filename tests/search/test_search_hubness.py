"""`Neighbourhoods`: kept across changes, it gives what a computation from scratch gives."""

from __future__ import annotations

import random

import numpy as np
import pytest
import xxhash

from mcpmount.semantic._hubness import K, Neighbourhoods


def unit_vectors(count: int, seed: int, dims: int = 24) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((count, dims)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    keys = [
        xxhash.xxh3_64_intdigest(f"{seed} {i}".encode()) for i in range(count)
    ]  # as text keys are
    return dict(zip(keys, rows, strict=True))


def from_scratch(vectors: dict[int, np.ndarray]) -> dict[int, float]:
    keys = list(vectors)
    matrix = np.stack([vectors[key] for key in keys])
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)
    k = min(K, len(keys) - 1)
    nearest = -np.sort(-sims, axis=1)[:, :k]
    return dict(zip(keys, nearest.mean(axis=1).tolist(), strict=True))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_changes_kept_incrementally_match_a_computation_from_scratch(seed: int) -> None:
    pool = unit_vectors(3000, seed)
    keys = list(pool)
    rng = random.Random(seed)
    present = set(keys[:2000])
    kept = Neighbourhoods()
    assert kept.update({key: pool[key] for key in present}) == pytest.approx(
        from_scratch({key: pool[key] for key in present}), abs=1e-5
    )
    for _ in range(12):  # bounded: a dozen changes of up to 40 texts in and out
        out = rng.sample(sorted(present), rng.randint(0, 40))
        into = rng.sample([key for key in keys if key not in present], rng.randint(0, 40))
        present = (present - set(out)) | set(into)
        now = {key: pool[key] for key in present}
        assert kept.update(now) == pytest.approx(from_scratch(now), abs=1e-5)


def test_texts_in_a_crowded_family_are_more_crowded_than_scattered_ones() -> None:
    scattered = unit_vectors(200, 7)
    rng = np.random.default_rng(7)
    centre = next(iter(unit_vectors(1, 8).values()))
    family: dict[int, np.ndarray] = {}
    for key in range(20):  # twenty tools that differ in a word: vectors close together
        row = centre + 0.1 * rng.standard_normal(centre.shape).astype(np.float32)
        family[key] = row / np.linalg.norm(row)
    crowding = Neighbourhoods().update(scattered | family)
    assert min(crowding[key] for key in family) > max(crowding[key] for key in scattered)


@pytest.mark.parametrize("count", [0, 1, 2, K + 1])
def test_tiny_sets(count: int) -> None:
    vectors = unit_vectors(count, 11)
    kept = Neighbourhoods()
    assert kept.update(vectors) == pytest.approx(
        from_scratch(vectors) if count > 1 else dict.fromkeys(vectors, 0.0)
    )
    grown = vectors | unit_vectors(K + 5, 12)
    assert kept.update(grown) == pytest.approx(from_scratch(grown), abs=1e-5)
