"""Start policies: a server published from its cached lists, started later or behind.

With ``start = "background"`` or ``"lazy"`` (per server, or the registry's), a server whose
lists are cached (`mcpmount.manifests`) is published from them at once, without spawning
anything: its supervisor holds a stand-in connection (`Connection.hold`) and is dormant. A
background server is started right away behind the published list; a lazy one by its first
call (`Supervisor.wake`: concurrent first calls start it once and wait). When it is up its live
lists are published over the cached ones through the same path as a re-list (pins,
``on_change``, all-or-nothing, one `RegistryChange` for what differs), and the cache is
written again. With ``idle_timeout`` a started server nobody called for that long is
closed and dormant again; its tools stay published and the next call starts it.

A cached list is checked and cleaned like a live one (`check_tools`, `Cleaner`) and held
against the lock file's pins: an entry the pins refuse is ignored with a warning, and the
server mounts from its live list, whose own check decides.

A server's lists are cached no longer than they say they may be kept (2026-07-28 era:
``ttlMs``, the tightest of every page), and never in a shared store (Redis) unless they
say ``cacheScope: public`` (`mcpmount.upstream.Freshness`); lists that may not be kept
start the server from its live lists each time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeVarTuple

import mcp_types

from mcpmount.audit import Cleaner
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import RegistryError
from mcpmount.manifests import (
    MAX_ENTRY_BYTES,
    FileStore,
    ManifestStore,
    RedisStore,
    decode_entry,
    encode_entry,
    spec_key,
    store_for,
)
from mcpmount.upstream import (
    Connection,
    SchemaVetting,
    ServerContent,
    Supervisor,
    check_content,
    check_tools,
)

__all__ = ["ManifestCache", "refused", "start_policy"]

logger = logging.getLogger(__name__)

StartPolicy = Literal["eager", "background", "lazy"]

Args = TypeVarTuple("Args")


def start_policy(spec: ServerSpec, settings: RegistrySettings) -> StartPolicy:
    """Return how ``spec`` starts: its own ``start``, else the registry's."""
    return spec.effective(settings).start


class ManifestCache:
    """The registry's cached lists: a server's lists read back as a dormant
    supervisor to publish (`read`), and a started server's lists written (`remember`).

    It publishes and starts nothing itself: `Servers` does, with what it returns.

    Args:
        schemas: The registry's verdicts on tool schemas, for cached lists too.
        store: Where cached lists are kept; default: the one the settings name (`store_for`).
        refresh: Mount every server from its live lists, whatever its policy, and write
            its entry (``mcpmount check --refresh-cache``).
    """

    def __init__(
        self,
        settings: Callable[[], RegistrySettings],
        schemas: SchemaVetting,
        store: ManifestStore | None,
        *,
        refresh: bool,
    ) -> None:
        self._settings = settings
        self._schemas = schemas
        self._store = store
        self._own_store: FileStore | RedisStore | None = None
        self.refresh = refresh

    @property
    def settings(self) -> RegistrySettings:
        return self._settings()  # a reload may replace them

    @property
    def store(self) -> ManifestStore:
        """The cache's store (made on first use, so eager registries never touch it)."""
        if self._store is None:
            self._store = self._own_store = store_for(self.settings)
        return self._store

    async def aclose(self) -> None:
        """Close the store this made (its connections), if it made one."""
        store, self._own_store = self._own_store, None
        if isinstance(store, RedisStore):
            await store.aclose()

    async def read(
        self, server: str, spec: ServerSpec
    ) -> tuple[Supervisor, list[mcp_types.Tool], ServerContent] | None:
        """Read ``server``'s cached lists back, if its policy and the cache allow.

        Returns:
            Its supervisor, dormant, and the checked lists to publish; None to mount it
            from its live list (eager, no usable entry, or lists the checks refused).
        """
        policy = start_policy(spec, self.settings)
        if policy == "eager" or self.refresh:
            return None
        key = spec_key(spec)
        data = await self.store.get(key)
        if data is None:
            return None
        effective = spec.effective(self.settings)
        manifest = decode_entry(server, key, data, effective.manifest_ttl)
        if manifest is None:
            return None
        schemas = self._schemas
        cleaner = Cleaner(server, effective.hidden_text)  # a shared cache is untrusted too
        try:
            tools = check_tools(
                server,
                manifest.tools,
                effective,
                spec.invalid_names,
                spec.filters_out,
                schemas,
                cleaner,
            )
            content = check_content(
                server, manifest.content, effective, spec.invalid_names, cleaner
            )
        except RegistryError as exc:
            refused(server, exc)
            return None
        stand_in = Connection(server, spec, self.settings, schemas=schemas)
        stand_in.hold(tools, content)
        stand_in.cleaned(cleaner)
        supervisor = Supervisor(server, spec, stand_in, cached=True)
        supervisor.sleep()
        return supervisor, tools, content

    async def remember(self, spec: ServerSpec, connection: Connection) -> None:
        """Cache ``connection``'s checked lists, if ``spec`` starts from a cache (or the
        cache is being refreshed), for as long as their server lets them be kept.

        Lists their server says may not be kept (``ttlMs: 0``), or not in a shared store
        (``cacheScope: private``, when the store is a shared Redis), are not written: an
        entry that no list may be served from takes the place of any earlier one, so the
        server starts from its live lists next time.
        """
        if start_policy(spec, self.settings) == "eager" and not self.refresh:
            return
        server, fresh, key = connection.server, connection.freshness, spec_key(spec)
        if fresh.ttl <= 0 or (self.store.shared and not fresh.shared):
            why = "may not be cached (ttlMs 0)" if fresh.ttl <= 0 else "are private (cacheScope)"
            logger.info("server %r: its lists %s, so they are not cached", server, why)
            await self.store.put(key, encode_entry(key, [], ServerContent(), ttl=0))
            return
        data = encode_entry(key, connection.tools, connection.content, ttl=fresh.ttl)
        if len(data) > MAX_ENTRY_BYTES:  # it would be ignored when read back
            logger.info("server %r: its lists are too large to cache", server)
            return
        await self.store.put(key, data)


def refused(server: str, exc: RegistryError) -> None:
    """Say that ``server``'s cached lists are refused (it mounts from its live lists)."""
    logger.warning("server %r: its cached lists are refused; starting it now: %s", server, exc)
