"""The semantic half of a `SearchIndex`: tool vectors, computed off the event loop, and
the tools nearest a query.

Each tool is read as one text (`semantic_text`: its raw name with spaces for ``_``, ``-``
and ``.``, its title and its description), keyed by the xxh3-64 of that text, so a tool
that comes back unchanged, or a second tool with the same text, costs nothing. Vectors are
looked up in the stores (the file of `mcpmount.semantic._vector_cache`, then the shared Redis
of `mcpmount.semantic._vector_store`) and only the missing ones computed, by
`SemanticRanker.work`, one batch per call, in whatever thread the index's owner gives it
(the catalog uses a worker thread); the model is loaded by the first call. Until every
indexed tool has its vector, `SemanticRanker.rank` returns None and search stays lexical.

Once they are all there, the same thread computes each text's crowding
(`mcpmount.semantic._hubness`) and prepares the scan (`_Scan`: the vectors stacked, their
crowding, the int8 copy of `mcpmount.semantic._int8_scores`): at 10,000 tools that is tens of
milliseconds, which the searching thread never pays. After a change search is lexical
while any tool waits for its vector; then, until the next scan is prepared, the last one
serves (without the tools gone; a new text whose vector was known joins with the next).

Thread safety: ``work`` and ``embed_query`` may run in other threads than the rest; the
queue and the vectors are shared under one lock, and the query vectors are the embedder's.
Everything else is the owner's thread's only.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xxhash

from mcpmount.semantic._embedding import Embedder, SemanticModelError, Vectors, resolve
from mcpmount.semantic._hubness import Neighbourhoods
from mcpmount.semantic._int8_scores import Scorer, import_onnx
from mcpmount.semantic._vector_cache import VectorCache
from mcpmount.semantic._vector_store import RedisVectors, VectorStore
from mcpmount.tool import MountedTool

__all__ = ["BATCH", "SemanticRanker", "semantic_text"]

logger = logging.getLogger("mcpmount.semantic")

BATCH = 64
"""Texts per `SemanticRanker.work` call: about a quarter of a second of one core (3-4 ms a text)."""

_LOOKUP = 4096
"""Queued texts looked up in the stores per `SemanticRanker.work` call."""

_SUB_BATCH = 16
"""Texts per model run, taken by length so that little of a run is padding."""

_MAX_CACHED_RANKINGS = 1024
_SPARE_VECTORS = 1024
"""Vectors of tools no longer indexed kept beyond twice the indexed, for tools that return."""

_SEPARATORS = re.compile(r"[_.\-]+")


def semantic_text(tool: MountedTool) -> str:
    """The text of ``tool`` that its vector is computed from."""
    definition = tool.definition
    parts = [_SEPARATORS.sub(" ", tool.raw_name)]
    if definition.title:
        parts.append(definition.title)
    if definition.description:
        parts.append(definition.description)
    return ": ".join(parts[:2]) + ("\n" + "\n".join(parts[2:]) if len(parts) > 2 else "")


@dataclass(frozen=True, slots=True)
class _Scan:
    """What a query is scored against: one row per distinct text (`keys`)."""

    keys: list[int]
    scorer: Scorer
    """Scores ``2 cos(q, t) - r(t)`` of the rows."""


class SemanticRanker:
    """Vectors of the indexed tools and the tools nearest a query, for one index.

    Args:
        model: ``"minilm-int8"`` or a path to an ``.onnx`` file; see
            `mcpmount.semantic._embedding`.
        cache_dir: Where vectors are kept between runs (`VectorCache`); None for memory
            only.
        shared: The URL of a Redis where vectors are shared with other indexes and
            machines (`RedisVectors`); None for none.
    """

    __slots__ = (
        "_asked",
        "_built",
        "_cache_dir",
        "_docs",
        "_embedder",
        "_hub_lock",
        "_hubs",
        "_hubs_of",
        "_keys",
        "_keys_changed",
        "_load_lock",
        "_lock",
        "_queue",
        "_ranked",
        "_rows",
        "_scan",
        "_shared",
        "_skipped",
        "_stale",
        "_stores",
        "_vectors",
        "_version",
        "computed",
        "error",
        "model",
    )

    def __init__(
        self, model: str, cache_dir: Path | None = None, shared: str | None = None
    ) -> None:
        self.model = model
        self._cache_dir = cache_dir
        self._shared = shared
        self._stores: list[VectorStore] = []
        """Where vectors are looked up, in order, and kept: the file, then Redis."""
        self._asked: set[int] = set()
        """Queued text keys the stores were asked for and did not have; under ``_lock``."""
        self.computed = 0
        """How many vectors this ranker's model run computed (not found in a store)."""
        self.error: SemanticModelError | None = None
        """Why the model could not be loaded; search then stays lexical."""
        self._embedder: Embedder | None = None
        self._load_lock = threading.Lock()
        self._lock = threading.Lock()
        self._vectors: dict[int, Vectors] = {}
        """Text key -> vector; written by ``work`` under ``_lock``."""
        self._queue: dict[int, str] = {}
        """Text key -> text, waiting for its vector; under ``_lock``."""
        self._version = 0
        """Bumped under ``_lock`` whenever vectors or crowding values are stored."""
        self._keys: dict[int, int] = {}
        """Text key -> how many indexed tools have that text; under ``_lock``."""
        self._keys_changed = 0
        """Bumped under ``_lock`` whenever a text joins or leaves ``_keys``."""
        self._hubs = Neighbourhoods()
        """The nearest others of each text; the thread holding ``_hub_lock`` only."""
        self._hub_lock = threading.Lock()
        self._scan: _Scan | None = None
        """The last prepared scan; replaced under ``_lock``."""
        self._hubs_of = -1
        """The ``_keys_changed`` that ``_scan`` was prepared for."""
        self._docs: dict[int, int] = {}
        """Doc id -> text key of the indexed tools; the owner's thread only."""
        self._stale = True
        self._built = -1
        self._rows: tuple[_Scan, list[int], dict[int, list[int]]] | None = None
        """The scan in use, the first doc id of each of its rows (-1 for a text gone), and
        the further doc ids of rows whose text several tools share."""
        self._skipped = 0
        """How many of the scan's rows have no doc id."""
        self._ranked: dict[tuple[str, int], list[int]] = {}
        """(query, n) -> its ranking, until the indexed tools or their vectors change."""

    @property
    def pending(self) -> int:
        """How many distinct texts still wait for their vectors; once none does, 1 while
        the crowding of a changed set of texts is not computed yet."""
        with self._lock:
            if self.error is not None:
                return 0
            return len(self._queue) or int(self._hubs_of != self._keys_changed)

    def add(self, doc_id: int, tool: MountedTool) -> None:
        """Index ``tool`` under ``doc_id``; its vector is queued unless already known."""
        text = semantic_text(tool)
        key = xxhash.xxh3_64_intdigest(text.encode())
        self.remove(doc_id)
        self._docs[doc_id] = key
        self._stale = True
        with self._lock:
            if key not in self._vectors:
                self._queue[key] = text
            count = self._keys.get(key, 0)
            self._keys[key] = count + 1
            self._keys_changed += not count

    def remove(self, doc_id: int) -> None:
        """Forget ``doc_id``; its vector stays cached for a tool with the same text."""
        key = self._docs.pop(doc_id, None)
        if key is not None:
            self._stale = True
            with self._lock:
                count = self._keys.pop(key)
                if count > 1:
                    self._keys[key] = count - 1
                else:
                    self._keys_changed += 1

    def work(self) -> bool:
        """Find or compute a batch of queued vectors; return whether more wait. Blocks; any
        thread.

        Queued texts are first looked up in the stores, up to `_LOOKUP` a call; only the
        ones no store has are computed, up to `BATCH` a call, and kept in every store. A
        model that cannot be loaded is logged once, stops all work, and leaves search
        lexical.
        """
        embedder = self._load()
        if embedder is None:
            return False
        self._look_up()
        with self._lock:
            waiting = [item for item in self._queue.items() if item[0] in self._asked]
            batch = sorted(waiting[:BATCH], key=lambda item: len(item[1]))
        computed: dict[int, Vectors] = {}
        for start in range(0, len(batch), _SUB_BATCH):
            part = batch[start : start + _SUB_BATCH]
            vectors = embedder.embed([text for _, text in part])
            found = dict(zip((key for key, _ in part), vectors, strict=True))
            self._keep(found)
            computed.update(found)
        self.computed += len(computed)
        for store in self._stores:
            store.put(computed)
        self._crowd()
        with self._lock:
            return bool(self._queue) or self._hubs_of != self._keys_changed

    def _crowd(self) -> None:
        """Once every indexed text has its vector, compute their crowding and prepare the
        scan of the current set of texts."""
        with self._hub_lock:
            with self._lock:
                if self._queue or self._hubs_of == self._keys_changed:
                    return
                changed = self._keys_changed
                vectors = {key: self._vectors[key] for key in self._keys}
            crowding = self._hubs.update(vectors)
            scan = None
            if vectors:
                keys = list(vectors)
                matrix = np.ascontiguousarray(np.stack([vectors[k] for k in keys]), np.float32)
                penalty = np.array([crowding[key] for key in keys], np.float32)
                scan = _Scan(keys, Scorer(matrix, penalty))
            with self._lock:
                self._scan = scan
                self._hubs_of = changed
                self._version += 1

    def _look_up(self) -> None:
        """Take the vectors of up to `_LOOKUP` queued texts from the stores that have them."""
        with self._lock:
            keys = [key for key in self._queue if key not in self._asked][:_LOOKUP]
            self._asked.update(keys)
        missing = keys
        for at, store in enumerate(self._stores):
            if not missing:
                break
            found = store.get(missing)
            for earlier in self._stores[:at]:
                earlier.put(found)  # found in Redis: into the file too
            self._keep(found)
            missing = [key for key in missing if key not in found]

    def _keep(self, vectors: Mapping[int, Vectors]) -> None:
        with self._lock:
            for key, vector in vectors.items():
                self._vectors[key] = vector
                self._queue.pop(key, None)
                self._asked.discard(key)
            self._version += 1

    def _load(self) -> Embedder | None:
        with self._load_lock:
            if self._embedder is None and self.error is None:
                try:
                    embedder = Embedder(*resolve(self.model), cache_dir=self._cache_dir)
                except SemanticModelError as exc:
                    self.error = exc
                    logger.warning("semantic search is off, search stays lexical: %s", exc)
                    with self._lock:
                        self._queue.clear()
                    return None
                import_onnx()  # here, off the searching thread: for the first int8 scan
                if self._cache_dir is not None:
                    self._stores.append(
                        VectorCache(self._cache_dir, embedder.sha256, embedder.dims)
                    )
                if self._shared is not None:
                    self._stores.append(RedisVectors(self._shared, embedder.sha256, embedder.dims))
                self._embedder = embedder
            return self._embedder

    def needs_vector(self, query: str) -> bool:
        """Whether `rank` would run the model on ``query``: ready, and no vector cached."""
        embedder = self._embedder
        with self._lock:
            waiting = bool(self._queue)
        return (
            embedder is not None
            and not waiting
            and bool(self._docs)
            and embedder.cached_query(query) is None
        )

    def embed_query(self, query: str) -> None:
        """Compute and keep the vector of ``query``. Blocking; any thread."""
        embedder = self._embedder
        if embedder is not None:
            embedder.embed_query(query)

    def rank(self, query: str, n: int) -> list[int] | None:
        """The ``n`` doc ids nearest ``query``, best first; None until all have vectors.

        Nearest by ``2 cos(q, t) - r(t)``: the cosine, less how crowded the tool's own
        neighbourhood is (`mcpmount.semantic._hubness`), so that a tool near everything does
        not come first for everything. Ties break by doc id.
        """
        embedder = self._embedder
        if embedder is None:
            return None
        with self._lock:
            waiting = bool(self._queue)
        if waiting:
            return None  # a tool without its vector would be ranked by its words alone
        if self._stale or self._built != self._version:
            self._build()
        if self._rows is None:
            return None
        cached = self._ranked.get((query, n))
        if cached is not None:
            return cached
        scan, first, more = self._rows
        # In this thread, never through BLAS, whose threads cost far more than the product
        # on a loaded machine; from 2,048 rows on, the int8 copy (0.25 ms at 10,000).
        scores = scan.scorer.scores(embedder.embed_query(query))
        take = min(n + self._skipped, len(scan.keys))
        top = np.argpartition(scores, -take)[-take:] if take < len(scan.keys) else range(take)
        order = sorted(
            (row for row in top if first[row] >= 0),
            key=lambda row: (-float(scores[row]), first[row]),
        )
        ranked: list[int] = []
        for row in order:
            ranked.append(first[row])
            ranked += more.get(row, ())
        del ranked[n:]
        if len(self._ranked) >= _MAX_CACHED_RANKINGS:
            self._ranked = {}  # bounded: the queries are the callers'
        self._ranked[query, n] = ranked
        return ranked

    def _build(self) -> None:
        """Map the rows of the last prepared scan to the indexed tools' doc ids: O(tools),
        no vector touched (None before the first scan, or while no tool is indexed)."""
        with self._lock:
            self._built = self._version
            scan = self._scan
            if len(self._vectors) > 2 * len(self._docs) + _SPARE_VECTORS:
                keep = set(self._docs.values())  # bounded: forget the long-gone tools'
                self._vectors = {k: v for k, v in self._vectors.items() if k in keep}
        self._stale = False
        self._ranked = {}
        self._rows = None
        if scan is None or not self._docs:
            return
        # Flat: ten thousand small lists would wake the garbage collector (100 ms seen).
        row_of = {key: row for row, key in enumerate(scan.keys)}
        first = [-1] * len(scan.keys)
        more: dict[int, list[int]] = {}
        for doc_id in sorted(self._docs):
            row = row_of.get(self._docs[doc_id])
            if row is None:
                continue
            if first[row] < 0:
                first[row] = doc_id
            else:
                more.setdefault(row, []).append(doc_id)
        self._skipped = first.count(-1)
        self._rows = (scan, first, more)
