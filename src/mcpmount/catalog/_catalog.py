"""The name table: every mounted tool under its public name, published all-or-nothing.

A server's list is published in one synchronous call, so nothing can interleave between
"are these names free?" and "insert them": either every tool of the list is in the table
under its public name, or the call raises and the table is exactly as it was. The table
also keeps what is derived from it: the search index, the manifest the model sees, and
the listeners told of every change.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types

from mcpmount import naming
from mcpmount.catalog._apps import app_names, model_visible, with_app_uris
from mcpmount.catalog._listeners import Listeners
from mcpmount.catalog._overrides import apply_overrides
from mcpmount.catalog._pins import Pins, diff_tools, hold_to_lock, pin_of
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import (
    NameCollisionError,
    ToolListError,
    UnknownToolError,
)
from mcpmount.search import (
    SearchIndex,
    SearchResult,
    ToolSearchCall,
    call_tool_search,
    run_tool_search,
    tool_search_definition,
)
from mcpmount.tool import MountedTool

__all__ = ["Catalog", "ChangeListener", "RegistryChange"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RegistryChange:
    """What one change did to the name table; listeners get one per change."""

    server: str
    added: tuple[str, ...] = ()
    """Public names that appeared."""
    removed: tuple[str, ...] = ()
    """Public names that disappeared."""
    changed: tuple[str, ...] = ()
    """Public names whose definition changed."""
    kind: Literal["tools", "prompts", "resources"] = "tools"
    """Which list changed; for ``resources`` (resources and templates) the names are
    registry URIs (``mcpmount://<namespace>/<uri>``). A server's first tool list is told
    even when empty; prompt and resource changes only when something changed."""

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


ChangeListener = Callable[[RegistryChange], None]
"""Called after each change of the registry's tables, with what changed (`subscribe`)."""


class Catalog:
    """Public name -> mounted tool, for every server, with its index and manifest.

    Not thread-safe: the registry changes it from its event loop, synchronously.

    Args:
        settings: ``max_name_length`` and ``defer_all`` are read from it.
        pins: Pinned tool hashes from a lock file; a list that differs is handled by
            its server's ``on_change`` policy.
    """

    def __init__(self, settings: RegistrySettings, pins: Pins | None = None) -> None:
        self.settings = settings
        self.pins = pins
        self._tools: dict[str, MountedTool] = {}
        self._servers: dict[str, dict[str, MountedTool]] = {}
        """Namespace -> raw name -> its entry."""
        self._app_names: dict[str, frozenset[str]] = {}
        """Namespace -> the raw names its app calls (`mcpmount.catalog._apps`)."""
        self._index = SearchIndex(
            settings.semantic_model,
            vector_cache=_vector_cache() if settings.semantic_model is not None else None,
            shared_vectors=settings.cache,
        )
        self._computing = False
        self._batched: anyio.Event | None = None
        """Set when `compute_vectors` ends a batch, for `wait_vectors`; made by a waiter."""
        self._manifest: list[mcp_types.Tool] | None = None
        self._listeners = Listeners[RegistryChange]("registry")

    def __len__(self) -> int:
        return len(self._tools)

    # -- changes ------------------------------------------------------------------------------

    def publish(
        self, server: str, spec: ServerSpec, tools: Sequence[mcp_types.Tool], *, first: bool
    ) -> None:
        """Make ``tools`` the server's whole list, or raise and change nothing.

        Args:
            server: The namespace.
            spec: The server's config (overrides, defer, visible, trust and ``on_change``).
            tools: Its checked tool list, raw names; overrides are applied here, before
                naming, so a public name is built from an override's name.
            first: The server's first list: publish (and tell listeners) even if empty.

        Raises:
            ToolListError: Two of its tools get the same public name (an override's name
                included).
            NameCollisionError: A name is taken by another server.
            DefinitionChangedError: The list differs from the pins and the policy refuses.
        """
        shown = apply_overrides(server, tools, spec.overrides)
        try:
            names = naming.assign(
                server,
                [tool.name for tool in tools],
                self.settings.max_name_length,
                renames={raw: tool.name for raw, tool in shown.items()},
                prefix=spec.prefix,
            )
        except ValueError as exc:
            raise ToolListError(server, str(exc)) from None
        for name, raw in names.items():
            other = self._tools.get(name)
            if other is not None and other.server != server:
                raise NameCollisionError(server, raw, name, other.server, other.raw_name)
        by_raw = {raw: name for name, raw in names.items()}
        entries = {
            tool.name: MountedTool(
                name=by_raw[tool.name],
                server=server,
                raw_name=tool.name,
                definition=with_app_uris(server, shown[tool.name], prefix=spec.prefix),
                deferred=spec.is_deferred(tool.name, self.settings.defer_all),
                annotations_trusted=spec.trust_annotations,
                listed=None if shown[tool.name] is tool else tool,
            )
            for tool in tools
        }
        old = self._servers.get(server, {})
        self._check_pins(server, spec, entries, old)
        diff = diff_tools({raw: pin_of(e) for raw, e in old.items()}, entries.values())
        if not first and not diff:
            return
        for entry in old.values():
            del self._tools[entry.name]
        self._tools.update((entry.name, entry) for entry in entries.values())
        self._servers[server] = entries
        self._app_names[server] = app_names(tools)
        self._index.remove(e.name for e in old.values())
        self._index.add(e for e in entries.values() if model_visible(e.definition))
        if not first:
            logger.info("server %r changed its tools: %s", server, diff.summary())
        self._changed(
            RegistryChange(
                server,
                added=tuple(by_raw[raw] for raw in diff.added),
                removed=tuple(old[raw].name for raw in diff.removed),
                changed=tuple(by_raw[raw] for raw in diff.changed),
            )
        )

    def forget(self, server: str) -> None:
        """Drop every tool of ``server``; a no-op if it has none published."""
        entries = self._servers.pop(server, None)
        self._app_names.pop(server, None)
        if entries is None:
            return
        names = [entry.name for entry in entries.values()]
        for name in names:
            del self._tools[name]
        self._index.remove(names)
        self._changed(RegistryChange(server, removed=tuple(names)))

    def _check_pins(
        self,
        server: str,
        spec: ServerSpec,
        tools: Mapping[str, MountedTool],
        old: Mapping[str, MountedTool],
    ) -> None:
        """Hold a tool list against the lock file's pins, per the server's ``on_change``."""
        pins = self.pins
        if pins is not None:
            on_change, before = spec.on_change, pins.servers.get(server, {})
            hold_to_lock(server, on_change, lambda: diff_tools(before, tools.values(), old))

    # -- listeners ----------------------------------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after every change of the table; returns the unsubscriber.

        Listeners run synchronously, right after the change: keep them short (set an event,
        put on a queue). One that raises is logged and kept.
        """
        return self._listeners.add(listener)

    def _changed(self, change: RegistryChange) -> None:
        self._manifest = None
        self._listeners.tell(change, f"a change of server {change.server!r}")

    # -- reading ------------------------------------------------------------------------------

    def get(self, name: str, *, servers: Container[str] | None = None) -> MountedTool:
        """Return the tool called ``name``: by its public name, else by the raw name an app
        calls it by (`mcpmount.catalog._apps`), among the apps of ``servers`` (None: all).

        Raises:
            UnknownToolError: No tool has that name (with close matches as suggestions; for
                a raw name several apps call, their tools' public names).
        """
        if (tool := self._tools.get(name)) is not None:
            return tool
        called = [
            self._servers[server][name]
            for server, names in sorted(self._app_names.items())
            if name in names and (servers is None or server in servers)
        ]
        if len(called) == 1:
            return called[0]
        if called:
            raise UnknownToolError(name, [tool.name for tool in called])
        raise UnknownToolError(name, difflib.get_close_matches(name, self._tools, n=3))

    def of(self, server: str) -> list[MountedTool]:
        """Return the tools of ``server``, in list order."""
        return list(self._servers.get(server, {}).values())

    def all(self) -> list[MountedTool]:
        """Return every tool, deferred ones included, sorted by public name."""
        return sorted(self._tools.values(), key=lambda e: e.name)

    def manifest(self) -> list[mcp_types.Tool]:
        """Return the listed tools (not deferred), plus ``tool_search`` if any tool is deferred."""
        if self._manifest is None:
            entries = [entry for entry in self.all() if model_visible(entry.definition)]
            manifest = [entry.to_mcp() for entry in entries if not entry.deferred]
            if any(entry.deferred for entry in entries):
                manifest.append(tool_search_definition())
            self._manifest = manifest
        return list(self._manifest)

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank every tool (deferred ones included) for ``query``."""
        return self._index.search(query, limit)

    def tool_search(
        self,
        arguments: Mapping[str, Any] | None,
        *,
        servers: Container[str] | None = None,
        tools: Container[str] | None = None,
    ) -> ToolSearchCall:
        """Run the ``tool_search`` meta-tool with the model's arguments; never raises.
        ``servers``, ``tools``: search only their tools (None: every tool)."""
        return call_tool_search(self._index, arguments, servers=servers, tools=tools)

    async def run_tool_search(
        self, arguments: Mapping[str, Any] | None, *, servers: Container[str] | None = None
    ) -> ToolSearchCall:
        """`tool_search`, with a new query's sentence vector computed in a worker thread."""
        return await run_tool_search(self._index, arguments, servers=servers)

    @property
    def vectors_pending(self) -> bool:
        """Whether tools wait for the vectors of semantic search (``semantic_model``)."""
        return bool(self._index.vectors_pending) and not self._computing

    async def compute_vectors(self) -> None:
        """Compute the waiting tool vectors in a worker thread, a batch at a time, until none
        wait; search stays lexical until then. A no-op while another call is at it.
        Cancelling it waits for the batch in hand (a fraction of a second)."""
        if self._computing:
            return
        self._computing = True
        try:
            more = True
            while more:
                more = await anyio.to_thread.run_sync(self._index.embed_pending)
                more = more or bool(self._index.vectors_pending)  # added while it ran
                self._tell_batch()
        finally:
            self._computing = False
            self._tell_batch()

    def _tell_batch(self) -> None:
        if self._batched is not None:
            self._batched.set()
            self._batched = None

    async def wait_vectors(self, progress: Callable[[int], None] | None = None) -> None:
        """Return once no tool waits for its vector (at once without a semantic model, or
        when it cannot load), computing them here if no `compute_vectors` is at it.
        ``progress`` is told how many tool texts wait, before each batch."""
        async with anyio.create_task_group() as group:
            while pending := self._index.vectors_pending:
                if progress is not None:
                    progress(pending)
                if self._batched is None:
                    self._batched = anyio.Event()
                batched = self._batched
                if not self._computing:  # none started, or the registry's was cancelled
                    group.start_soon(self.compute_vectors)
                await batched.wait()

    def pins_of(self) -> dict[str, dict[str, str]]:
        """Return namespace -> raw name -> definition hash, for every published server."""
        return {
            server: {raw: pin_of(entry) for raw, entry in entries.items()}
            for server, entries in self._servers.items()
            if entries
        }


def _vector_cache() -> Path:
    """Where the semantic ranker keeps tool vectors between runs (only it loads platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("mcpmount")) / "vectors"
