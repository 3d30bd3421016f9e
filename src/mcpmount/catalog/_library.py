"""The prompt and resource tables: what servers offer besides tools, under public names.

Prompts are named like tools, ``<namespace>__<prompt>`` (`naming.assign`: the same
sanitizing and hash suffixes); resources and templates get registry URIs
(``mcpmount://<namespace>/<uri>``, see `mcpmount.catalog._uris`). A server's lists are
checked and named in `Library.stage`, which may raise and changes nothing, and made
visible in `Library.commit`, which never raises: the registry stages, publishes the
tools, then commits, all in one synchronous block, so a server's tools, prompts and
resources appear together or not at all.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import mcp_types

from mcpmount import naming
from mcpmount.catalog._catalog import ChangeListener, RegistryChange
from mcpmount.catalog._listeners import Listeners
from mcpmount.catalog._pins import CONTENT_KINDS, Pins, content_hash, diff_hashes, hold_to_lock
from mcpmount.catalog._uris import registry_uri
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import (
    NameCollisionError,
    ToolListError,
    UnknownPromptError,
)

__all__ = ["Library", "MountedPrompt", "StagedContent"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MountedPrompt:
    """A prompt of one server, as the registry publishes it."""

    name: str
    """The public name, ``<namespace>__<prompt>``; unique among prompts."""
    server: str
    raw_name: str
    """The name the server listed it under; ``prompts/get`` is sent with it."""
    definition: mcp_types.Prompt
    """The definition exactly as the server listed it (untrusted data)."""

    def to_mcp(self) -> mcp_types.Prompt:
        """Return the definition under its public name, as a ``prompts/list`` entry."""
        return self.definition.model_copy(update={"name": self.name})


@dataclass(frozen=True, slots=True)
class StagedContent:
    """One server's checked and named content, ready to commit (see `Library.stage`)."""

    server: str
    prompts: dict[str, MountedPrompt]
    """Raw name -> entry."""
    resources: tuple[mcp_types.Resource, ...]
    templates: tuple[mcp_types.ResourceTemplate, ...]
    subscribe: bool = False
    """Whether the server supports subscribing to resource updates."""
    prefix: bool = True
    """Whether its URIs are published as registry URIs (false: as they are)."""

    def uris(self) -> list[str]:
        """Its resource URIs and URI templates, as the server lists them."""
        return [r.uri for r in self.resources] + [t.uri_template for t in self.templates]

    def published(self, uri: str) -> str:
        """``uri`` of this server as the registry publishes it."""
        return registry_uri(self.server, uri, prefix=self.prefix)

    def hashes(self) -> dict[str, dict[str, str]]:
        """Section -> raw name or URI -> definition hash (the lock file's sections)."""
        return {
            "prompts": {raw: content_hash(e.definition) for raw, e in self.prompts.items()},
            "resources": {r.uri: content_hash(r) for r in self.resources},
            "templates": {t.uri_template: content_hash(t) for t in self.templates},
        }


class Library:
    """Public prompt name -> prompt, and each server's resources and templates.

    Not thread-safe: the registry changes it from its event loop, synchronously.
    """

    def __init__(self, settings: RegistrySettings, pins: Pins | None = None) -> None:
        self.settings = settings
        self.pins = pins
        self._prompts: dict[str, MountedPrompt] = {}
        self._servers: dict[str, StagedContent] = {}
        self._listeners = Listeners[RegistryChange]("registry")
        self._updates = Listeners[str]("resource-update")

    # -- changes ------------------------------------------------------------------------------

    def stage(
        self,
        server: str,
        spec: ServerSpec,
        prompts: Sequence[mcp_types.Prompt],
        resources: Sequence[mcp_types.Resource],
        templates: Sequence[mcp_types.ResourceTemplate],
        *,
        subscribe: bool = False,
    ) -> StagedContent:
        """Name a server's checked lists and hold them to the pins; changes nothing.

        Raises:
            ToolListError: Two of its prompts get the same public name.
            NameCollisionError: A prompt name is taken by another server.
            DefinitionChangedError: A list differs from the pins and the policy refuses.
        """
        try:
            names = naming.assign(
                server,
                [p.name for p in prompts],
                self.settings.max_name_length,
                prefix=spec.prefix,
            )
        except ValueError as exc:
            # `naming.assign` speaks of tools; these are prompts.
            raise ToolListError(server, str(exc).replace("tools", "prompts", 1)) from None
        for name, raw in names.items():
            other = self._prompts.get(name)
            if other is not None and other.server != server:
                raise NameCollisionError(
                    server, raw, name, other.server, other.raw_name, kind="prompt"
                )
        by_raw = {raw: name for name, raw in names.items()}
        entries = {p.name: MountedPrompt(by_raw[p.name], server, p.name, p) for p in prompts}
        staged = StagedContent(
            server, entries, tuple(resources), tuple(templates), subscribe, spec.prefix
        )
        if not spec.prefix or any(not other.prefix for other in self._servers.values()):
            self._check_uris(staged)  # prefixed URIs alone never clash
        self._check_pins(spec, staged)
        return staged

    def _check_uris(self, staged: StagedContent) -> None:
        """Refuse a server that keeps its own URIs when another publishes one of them."""
        taken = {
            other.published(uri): (other.server, uri)
            for other in self._servers.values()
            if other.server != staged.server
            for uri in other.uris()
        }
        for uri in staged.uris():
            if (other := taken.get(uri)) is not None:
                raise NameCollisionError(staged.server, uri, uri, *other, kind="resource")

    def owner_of_uri(self, uri: str) -> tuple[str, str] | None:
        """The server (and its own URI) of ``uri`` among the servers that keep their own
        URIs: the one listing it, else the first (by namespace) with a template whose text
        before its first ``{`` begins it; None if none."""
        unprefixed = [s for _, s in sorted(self._servers.items()) if not s.prefix]
        for staged in unprefixed:
            if any(r.uri == uri for r in staged.resources):
                return staged.server, uri
        for staged in unprefixed:
            for template in staged.templates:
                literal = template.uri_template.split("{", 1)[0]
                if literal and uri.startswith(literal):
                    return staged.server, uri
        return None

    def commit(self, staged: StagedContent) -> None:
        """Make a staged server's content visible and tell listeners what changed."""
        server = staged.server
        old = self._servers.get(server)
        empty: dict[str, dict[str, str]] = {kind: {} for kind in CONTENT_KINDS}
        before = old.hashes() if old is not None else empty
        after = staged.hashes()
        for entry in (old.prompts if old is not None else {}).values():
            del self._prompts[entry.name]
        self._prompts.update((e.name, e) for e in staged.prompts.values())
        self._servers[server] = staged
        prompts = diff_hashes(before["prompts"], after["prompts"])
        names = {raw: e.name for raw, e in (old.prompts if old is not None else {}).items()}
        names.update((raw, e.name) for raw, e in staged.prompts.items())
        self._changed(
            RegistryChange(
                server,
                added=tuple(names[raw] for raw in prompts.added),
                removed=tuple(names[raw] for raw in prompts.removed),
                changed=tuple(names[raw] for raw in prompts.changed),
                kind="prompts",
            )
        )
        uris = diff_hashes(
            before["resources"] | before["templates"], after["resources"] | after["templates"]
        )
        self._changed(
            RegistryChange(
                server,
                added=tuple(staged.published(uri) for uri in uris.added),
                removed=tuple(staged.published(uri) for uri in uris.removed),
                changed=tuple(staged.published(uri) for uri in uris.changed),
                kind="resources",
            )
        )

    def forget(self, server: str) -> None:
        """Drop every prompt and resource of ``server``; a no-op if it has none published."""
        staged = self._servers.pop(server, None)
        if staged is None:
            return
        for entry in staged.prompts.values():
            del self._prompts[entry.name]
        gone = tuple(e.name for e in staged.prompts.values())
        self._changed(RegistryChange(server, removed=gone, kind="prompts"))
        gone = tuple(staged.published(uri) for uri in staged.uris())
        self._changed(RegistryChange(server, removed=gone, kind="resources"))

    def _check_pins(self, spec: ServerSpec, staged: StagedContent) -> None:
        """Hold each list against its lock file section, per the server's ``on_change``."""
        pins = self.pins
        if pins is None or pins.content is None:
            return
        server = staged.server
        for kind, hashes in staged.hashes().items():
            if kind not in pins.content:
                continue  # a lock file older than this section pins nothing of its kind
            before = pins.content[kind].get(server, {})
            diff = partial(diff_hashes, before, hashes)
            hold_to_lock(server, spec.on_change, diff, what=kind)

    # -- listeners ----------------------------------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after every change of a prompt or resource list."""
        return self._listeners.add(listener)

    def subscribe_updates(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener`` with the registry URI of every resource update."""
        return self._updates.add(listener)

    def updated(self, uri: str) -> None:
        """Tell the update listeners that the resource at registry URI ``uri`` changed."""
        self._updates.tell(uri, repr(uri))

    def _changed(self, change: RegistryChange) -> None:
        if change:
            self._listeners.tell(change, f"a change of server {change.server!r}")

    # -- reading ------------------------------------------------------------------------------

    def prompt(self, name: str) -> MountedPrompt:
        """Return the prompt called ``name``.

        Raises:
            UnknownPromptError: No prompt has that name (with close matches).
        """
        try:
            return self._prompts[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._prompts, n=3)
            raise UnknownPromptError(name, close) from None

    def prompts(self) -> list[mcp_types.Prompt]:
        """Every prompt under its public name, sorted by name."""
        return [self._prompts[name].to_mcp() for name in sorted(self._prompts)]

    def resources(self) -> list[mcp_types.Resource]:
        """Every resource under its registry URI, by server, in list order."""
        return [
            r.model_copy(update={"uri": staged.published(r.uri)})
            for _, staged in sorted(self._servers.items())
            for r in staged.resources
        ]

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        """Every resource template under its registry URI template, by server."""
        return [
            t.model_copy(update={"uri_template": staged.published(t.uri_template)})
            for _, staged in sorted(self._servers.items())
            for t in staged.templates
        ]

    def of(self, server: str) -> StagedContent | None:
        """Return what ``server`` has published, if it is published."""
        return self._servers.get(server)

    def pins_of(self) -> dict[str, dict[str, dict[str, str]]]:
        """Section -> namespace -> raw name or URI -> hash, for every published server."""
        sections: dict[str, dict[str, dict[str, str]]] = {kind: {} for kind in CONTENT_KINDS}
        for server, staged in self._servers.items():
            for kind, hashes in staged.hashes().items():
                if hashes:
                    sections[kind][server] = hashes
        return sections
