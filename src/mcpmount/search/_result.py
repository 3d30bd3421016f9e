"""What a search returns: its hits, best first, and a hint when it found few or none."""

from __future__ import annotations

from dataclasses import dataclass

from mcpmount.tool import MountedTool

__all__ = ["Hit", "SearchResult"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One tool a search returned."""

    tool: MountedTool
    """The matched tool."""

    score: float
    """Its BM25F relevance to the query's words (0.0 for ``select:`` and name-only hits, and
    for hits that only the semantic ranking found).

    Hits are ordered by match kind first (exact name, then name prefix, then words), so a
    later hit may score higher than an exact-name hit before it.
    """


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of one search."""

    hits: tuple[Hit, ...]
    """Best first; at most the clamped ``limit`` (or ``MAX_LIMIT`` for ``select:``)."""

    hint: str | None = None
    """Why there are no (or fewer) hits and what to try instead; None when all went well."""
