"""How long a server's lists may be kept, as the server says it (2026-07-28 era).

In the 2026-07-28 era every list result carries ``ttlMs`` (how long a client may cache
it; ``0``: not at all) and ``cacheScope`` (``public``: a shared cache may serve it to
anyone; ``private``: only the one who listed). A server's cached lists are kept
no longer than the tightest ``ttlMs`` of its pages, and out of a shared store unless every
page said ``public`` (`mcpmount.registry`'s starts decide). mcp 2.3.0's servers say
``ttlMs: 0``, ``private`` unless told otherwise (``cache_hints``). As the SDK's own cache
does, a hint counts only in that era: a handshake-era answer holding the keys says
nothing, and nor does a key a page leaves out; lists that said nothing are kept as
before, for ``manifest_ttl``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mcp_types

__all__ = ["Freshness"]


@dataclass(slots=True)
class Freshness:
    """What a server's lists said of caching them: the tightest of every page seen."""

    modern: bool = False
    """Whether the lists came in the 2026-07-28 era (only then do the hints count)."""

    ttl: float = math.inf
    """Seconds the lists may be kept (``inf``: no page said)."""

    shared: bool = True
    """Whether a shared cache may keep them (no page said ``private``)."""

    def saw(self, page: mcp_types.CacheableResult) -> None:
        """Take in the hints of one page of a list."""
        if not self.modern:
            return
        said = page.model_fields_set
        if "ttl_ms" in said:
            self.ttl = min(self.ttl, page.ttl_ms / 1000)
        if "cache_scope" in said and page.cache_scope != "public":
            self.shared = False
