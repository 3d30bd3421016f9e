"""The pins of what a registry has mounted, for ``mcpmount lock`` (`Registry.lock`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mcpmount.catalog import CONTENT_KINDS, Catalog, Library, Pins

__all__ = ["lock_pins"]


def lock_pins(
    catalog: Catalog, library: Library, failed: Collection[str], previous: Pins | None
) -> Pins:
    """Return the pins of every mounted tool, prompt and resource.

    Args:
        catalog, library: The registry's tables.
        failed: Optional servers that failed to mount: each keeps the pins it had in
            ``previous``, so a server that is down for a moment is not unpinned.
        previous: The pins of the lock file being replaced.
    """
    servers = catalog.pins_of()
    if previous is not None:
        for server in failed:
            if server in previous.servers:
                servers[server] = dict(previous.servers[server])
    sections = library.pins_of()
    old = previous.content if previous is not None else None
    for kind in CONTENT_KINDS:
        empty: Mapping[str, Mapping[str, str]] = {}
        pinned = old.get(kind, empty) if old is not None else empty
        for server in failed:
            if server in pinned:
                sections[kind][server] = dict(pinned[server])
    return Pins(servers, content=sections)
