"""The BM25F index over mounted tools; see the package docstring for the ranking."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from mcpmount.search._analysis import Analyzer, identifier_like
from mcpmount.search._fields import tool_fields
from mcpmount.search._fusion import fuse_rankings, semantic_depth
from mcpmount.search._names import NameKeys
from mcpmount.search._postings import Doc, Postings
from mcpmount.search._result import Hit, SearchResult
from mcpmount.search._synonyms import RELATED, SYNONYM_WEIGHT
from mcpmount.tool import MountedTool

if TYPE_CHECKING:
    from mcpmount.semantic import SemanticRanker

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "SearchIndex"]

DEFAULT_LIMIT: Final = 5
MAX_LIMIT: Final = 20
"""The most hits one search returns, whatever ``limit`` asks for."""

_MAX_QUERY_CHARS = 2000
"""Longer queries are cut: no real need is that long, and it bounds the work."""

_SELECT_PREFIX = "select:"
_MAX_CACHED_TERMS = 4096
"""The most query words whose scored postings an index keeps between changes."""


class SearchIndex:
    """An incremental BM25F index over mounted tools; see `mcpmount.search` for the ranking.

    Not thread-safe: the registry owns one and changes it from one task; only
    `embed_pending` may run in another thread.

    Args:
        semantic_model: None for lexical ranking only; else ``"minilm-int8"`` or the path
            of an ``.onnx`` sentence encoder, whose ranking is fused with the lexical one
            once every tool has its vector (see `embed_pending`). Needs the ``semantic``
            extra.
        vector_cache: A directory where tool vectors are kept between runs, one file per
            model; None to keep them in memory only.
        shared_vectors: The URL of a Redis (``redis://``, ``rediss://``, ``unix://``; the
            ``redis`` extra) where tool vectors are shared with every index that uses it,
            on any machine: the registry's ``cache``. None for none.
    """

    __slots__ = (
        "_analyzer",
        "_dirty",
        "_expanded",
        "_ids",
        "_limbo",
        "_names",
        "_next_id",
        "_postings",
        "_semantic",
    )

    def __init__(
        self,
        semantic_model: str | None = None,
        *,
        vector_cache: Path | None = None,
        shared_vectors: str | None = None,
    ) -> None:
        self._analyzer = Analyzer()
        self._postings = Postings()
        self._ids: dict[str, int] = {}
        """Public name -> doc id."""
        self._next_id = 0
        self._expanded: dict[str, dict[int, float]] = {}
        """Query term -> impacts of the term or its synonyms; a cache of the postings."""
        self._names = NameKeys()
        """The tools' names, for exact and prefix lookups."""
        self._limbo: dict[str, int] = {}
        """Public name -> doc id of the tools removed since the last search."""
        self._dirty = False
        self._semantic: SemanticRanker | None = None
        if semantic_model is not None:
            from mcpmount.semantic import SemanticRanker  # numpy: only when asked

            self._semantic = SemanticRanker(semantic_model, vector_cache, shared_vectors)

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"<SearchIndex tools={len(self._ids)}>"

    def tools(self) -> list[MountedTool]:
        """Every indexed tool, in no particular order (``describe:`` reads a namespace's)."""
        docs = self._postings.docs
        return [docs[doc_id].tool for doc_id in self._ids.values()]

    @property
    def analyzer(self) -> Analyzer:
        """This index's text analysis, with its own cache of the words it has seen."""
        return self._analyzer

    @property
    def vectors_pending(self) -> int:
        """How many tool texts wait for their vectors (0 without a semantic model), or 1
        while only the crowding of a changed set waits. Applies recorded removals first."""
        if self._semantic is None:
            return 0
        if self._dirty:
            self._settle()
        return self._semantic.pending

    @property
    def vectors_computed(self) -> int:
        """How many tool vectors this index ran the model for (found in no store)."""
        return 0 if self._semantic is None else self._semantic.computed

    def embed_pending(self) -> bool:
        """Compute one batch of the waiting tool vectors; return whether more wait.

        Blocking (a fraction of a second a batch) and safe to run in a worker thread while
        the owner's thread changes and searches the index: call it in a loop off the event
        loop. Until all are computed, search is lexical only. A model that fails to load
        is logged once (``mcpmount.semantic``) and leaves search lexical.
        """
        return self._semantic is not None and self._semantic.work()

    def query_needs_vector(self, query: str) -> bool:
        """Whether a search of ``query`` would first run the model on it (no vector cached).

        That run takes a few milliseconds of one core (about 2 ms for ten words; 128 word
        pieces at most), so a caller on an event loop computes it in a worker thread with
        `embed_query` first; see `mcpmount.search.run_tool_search`.
        """
        text = query[:_MAX_QUERY_CHARS].strip()
        return (
            self._semantic is not None
            and bool(text)
            and text[: len(_SELECT_PREFIX)].lower() != _SELECT_PREFIX
            and not any(word.startswith("+") for word in text.split())
            and self._semantic.needs_vector(text)
        )

    def embed_query(self, query: str) -> None:
        """Compute and keep the vector a search of ``query`` needs. Blocking; any thread."""
        if self._semantic is not None:
            self._semantic.embed_query(query[:_MAX_QUERY_CHARS].strip())

    # --- changes --------------------------------------------------------------------------

    def add(self, tools: Iterable[MountedTool]) -> None:
        """Index ``tools``; a tool whose public name is already indexed replaces it.

        A tool equal to the one indexed under its name (or removed since the last search)
        keeps its statistics, so removing a server's tools and adding them back costs only
        the tools that changed.
        """
        analyzer = self._analyzer
        names = self._names
        docs = self._postings.docs
        for tool in tools:
            old = self._ids.pop(tool.name, None)
            if old is None:
                old = self._limbo.pop(tool.name, None)
            if old is not None:
                if docs[old].tool == tool:
                    docs[old].tool = tool  # equal, maybe not the same object: hand out this one
                    self._ids[tool.name] = old
                    continue
                self._drop(old)
            doc_id = self._next_id
            self._next_id += 1
            self._postings.add(doc_id, Doc.of(tool, tool_fields(tool, analyzer)))
            if self._semantic is not None:
                self._semantic.add(doc_id, tool)
            self._ids[tool.name] = doc_id
            names.add(tool, doc_id)
            self._dirty = True

    def remove(self, names: Iterable[str]) -> None:
        """Forget the tools with these public names; unknown names are ignored."""
        for name in names:
            doc_id = self._ids.pop(name, None)
            if doc_id is not None:
                self._limbo[name] = doc_id  # dropped at the next search, unless added back
                self._dirty = True

    def _drop(self, doc_id: int) -> None:
        tool = self._postings.docs[doc_id].tool
        self._postings.remove(doc_id)
        if self._semantic is not None:
            self._semantic.remove(doc_id)
        self._names.remove(tool, doc_id)
        self._dirty = True

    def _settle(self) -> None:
        """Apply the recorded changes; see `Postings` for the cost."""
        for doc_id in self._limbo.values():
            self._drop(doc_id)
        self._limbo = {}
        self._dirty = False
        if self._postings.settle():
            self._expanded = {}
        self._names.settle()

    def _term_impacts(self, term: str) -> dict[int, float]:
        """Impacts of ``term``, each doc scored by the best of the term and its synonyms."""
        cached = self._expanded.get(term)
        if cached is not None:
            return cached
        postings = self._postings
        idf = postings.idf(term)
        merged = {doc_id: idf * s for doc_id, s in postings.rows.get(term, {}).items()}
        for other in sorted(RELATED.get(term, ())):
            scale = postings.idf(other) * SYNONYM_WEIGHT
            for doc_id, s in postings.rows.get(other, {}).items():
                discounted = scale * s
                if discounted > merged.get(doc_id, 0.0):
                    merged[doc_id] = discounted
        if merged:
            if len(self._expanded) >= _MAX_CACHED_TERMS:
                self._expanded = {}  # bounded: query words are the caller's
            self._expanded[term] = merged
        return merged

    # --- queries --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = DEFAULT_LIMIT,
        *,
        servers: Container[str] | None = None,
        tools: Container[str] | None = None,
    ) -> SearchResult:
        """Return the tools that best match ``query``, best first; never raises.

        Args:
            query: Keywords, ``select:a,b`` or keywords with ``+required`` words.
            limit: How many hits to return; clamped to 1..`MAX_LIMIT`.
            servers: Search only these servers' tools (None: every tool). A tool of
                another server is as absent as one never indexed: it is never returned,
                never named in a hint, and a ``+word`` only it holds is a word no tool
                holds. (Word statistics stay those of every indexed tool.)
            tools: Search only the tools of these public names (None: every tool), as
                absent as ``servers`` makes the others (a policy's denied tools).
        """
        try:
            return self._search(query, limit, servers, tools)
        except Exception as exc:  # a bug must not take the model's turn down
            return SearchResult((), f"search failed on this query ({type(exc).__name__})")

    def _search(
        self,
        query: str,
        limit: int,
        servers: Container[str] | None,
        tools: Container[str] | None,
    ) -> SearchResult:
        limit = max(1, min(int(limit), MAX_LIMIT))
        if self._dirty:
            self._settle()
        text = query[:_MAX_QUERY_CHARS].strip()
        if not text:
            return SearchResult((), "empty query: give keywords such as 'stop instance'")
        if not self._ids:
            return SearchResult((), "no tools are available to search")
        docs = self._postings.docs

        hidden = servers is not None or tools is not None

        def shown(i: int) -> bool:
            tool = docs[i].tool
            return (servers is None or tool.server in servers) and (
                tools is None or tool.name in tools
            )

        def seen(ids: Iterable[int]) -> list[int]:
            """``ids`` less the tools not searched."""
            if not hidden:
                return list(ids)
            return [i for i in ids if shown(i)]

        if text[: len(_SELECT_PREFIX)].lower() == _SELECT_PREFIX:
            return self._select(text[len(_SELECT_PREFIX) :], seen)

        lowered = text.lower()
        exact = seen(self._names.matches(lowered, prefix=False))
        prefix = (
            [i for i in seen(self._names.matches(lowered, prefix=True)) if i not in exact]
            if identifier_like(lowered)
            else []
        )

        required, optional = self._analyzer.query_terms(text)
        terms = list(dict.fromkeys(required + optional))

        scores: dict[int, float] = {}
        candidates: set[int] | None = None
        if required:
            for term in dict.fromkeys(required):
                ids = seen(self._postings.rows.get(term, ()))
                if not ids:
                    return SearchResult(
                        (), f"no tool contains the required word {term!r}; drop the '+'"
                    )
                candidates = set(ids) if candidates is None else candidates.intersection(ids)
            if not candidates:
                return SearchResult((), "no tool contains all the '+' words together")
            exact = [i for i in exact if i in candidates]
            prefix = [i for i in prefix if i in candidates]
        for term in terms:
            impacts = self._term_impacts(term)
            if candidates is None:
                get = scores.get
                for doc_id, impact in impacts.items():
                    scores[doc_id] = get(doc_id, 0.0) + impact
            else:
                for doc_id in candidates:
                    impact = impacts.get(doc_id)
                    if impact is not None:
                        scores[doc_id] = scores.get(doc_id, 0.0) + impact
        if candidates is not None:
            for doc_id in candidates:
                scores.setdefault(doc_id, 0.0)
        elif hidden:
            scores = {i: s for i, s in scores.items() if shown(i)}

        ranked = self._rank(exact, scores) + self._rank(prefix, scores)
        taken = set(ranked)
        need = limit - len(ranked)
        nearest = (
            None
            if need <= 0 or candidates is not None or self._semantic is None
            else self._semantic.rank(text, semantic_depth(hidden=hidden))
        )
        if nearest is not None:
            fused = fuse_rankings(
                seen(nearest), scores, limit + len(taken), lambda i: docs[i].tool.name
            )
            ranked += [i for i in fused if i not in taken][:need]
        elif need > 0 and scores:
            # Threshold on scores alone (fast, in C), then order the few survivors.
            cut = heapq.nlargest(need + len(taken), scores.values())[-1]
            rest = [i for i, s in scores.items() if s >= cut and i not in taken]
            ranked += self._rank(rest, scores)[:need]
        ranked = ranked[:limit]
        if not ranked:
            if not terms:
                return SearchResult((), "the query has no searchable words; use keywords")
            return SearchResult(
                (), "no tool matched; try other words (e.g. the action and the object)"
            )
        hits = tuple(Hit(self._postings.docs[i].tool, round(scores.get(i, 0.0), 6)) for i in ranked)
        return SearchResult(hits, None)

    def _rank(self, ids: Iterable[int], scores: Mapping[int, float]) -> list[int]:
        docs = self._postings.docs
        return sorted(ids, key=lambda i: (-scores.get(i, 0.0), docs[i].tool.name))

    def _select(self, spec: str, seen: Callable[[Iterable[int]], list[int]]) -> SearchResult:
        wanted = [part.strip() for part in spec.split(",") if part.strip()]
        if not wanted:
            return SearchResult((), "select: needs tool names, e.g. 'select:fs__read_file'")
        chosen: dict[int, None] = {}
        unknown: list[str] = []
        for name in wanted:
            doc_id = self._ids.get(name)
            if doc_id is not None and seen((doc_id,)):
                chosen[doc_id] = None
                continue
            ids = seen(self._names.matches(name.lower(), prefix=False))
            if ids:
                for i in self._rank(ids, {}):
                    chosen[i] = None
            else:
                unknown.append(name)
        ids = list(chosen)
        hints: list[str] = []
        if unknown:
            hints.append("unknown tool names: " + ", ".join(repr(n) for n in unknown))
        if len(ids) > MAX_LIMIT:
            hints.append(f"only the first {MAX_LIMIT} tools are returned")
        hits = tuple(Hit(self._postings.docs[i].tool, 0.0) for i in ids[:MAX_LIMIT])
        return SearchResult(hits, "; ".join(hints) or None)
