"""Hot reload: apply a new config to an open registry, server by server.

`Registry.reload` runs a `Reloader`. It compares each namespace's spec with the one
mounted, by value (pydantic models compare field by field; an ``env`` or ``headers``
value, a `SecretStr`, compares by its secret, and the values ``${VAR}`` took count too),
together with the registry settings that server reads. Then:

- an unchanged server is not touched: same process, same names, no `RegistryChange`;
- a removed server is closed, as `Registry.unmount` does (its names go in one change);
- an added server is mounted, all-or-nothing, as `Registry.mount` does;
- a changed server is closed, then mounted again from its new spec under the same
  namespace (both cannot hold the namespace, and a stdio server may hold a port or a
  file the new one needs). If the new spec fails to mount, nothing of it stays and the
  old one is not brought back: the config asks for the new one. It is reported in
  `ReloadResult.failed` and in `Registry.failures`, and the next reload tries it again.

Closes run first, concurrently; then the mounts, concurrently. Each is announced by the
`RegistryChange` its table change makes. Registry settings are applied where they can be:
``call_timeout`` and ``approval`` at once; a key a server reads (its limits,
``startup_timeout``, ...) restarts the servers it affects; ``max_name_length`` and
``defer_all`` name and hide every tool, and ``cache`` and ``cache_dir`` move the open
cache of lists, so they are kept, with a warning, until the registry is opened again.

The lock file's pins are those read when the registry opened, unless a reload is given
new ones (``pins=``, as ``serve`` does with the lock file beside its config): then a server
whose pins changed restarts, and is held against its new pins (after ``mcpmount lock``
approved a server's new definitions, the reload mounts it again).
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import anyio

from mcpmount.catalog import CONTENT_KINDS, Pins
from mcpmount.config import HttpServer, RegistryConfig, RegistrySettings, ServerSpec, load_config
from mcpmount.errors import ServerError
from mcpmount.registry._mounting import mount_each
from mcpmount.registry._servers import Servers

__all__ = [
    "KEEP_PINS",
    "NOT_LIVE_KEYS",
    "KeepPins",
    "ReloadResult",
    "Reloader",
    "server_settings_changed",
]

logger = logging.getLogger(__name__)

NOT_LIVE_KEYS = ("max_name_length", "defer_all", "cache", "cache_dir")
"""Registry settings a reload cannot apply: they name or hide every tool of every server,
or move the cache of lists the registry has open."""

_LIVE_KEYS = ("call_timeout", "approval", "first_list_wait", "block_secrets", "code_mode")
"""Registry settings read at each call: a reload applies them without touching a server."""

_URL_KEYS = ("token_dir", "token_store")
"""Registry settings only a url server reads (its OAuth logins)."""


@dataclass(frozen=True, slots=True)
class ReloadResult:
    """What one `Registry.reload` did, by namespace (each tuple in config order)."""

    added: tuple[str, ...] = ()
    """Servers mounted that were not mounted before (a server that failed before too)."""
    removed: tuple[str, ...] = ()
    """Servers closed because the config no longer has them."""
    restarted: tuple[str, ...] = ()
    """Servers whose spec, or a setting they read, changed: closed, then mounted again."""
    unchanged: tuple[str, ...] = ()
    """Servers left running untouched."""
    failed: Mapping[str, ServerError] = field(default_factory=lambda: MappingProxyType({}))
    """Added or restarted servers whose new spec failed to mount: nothing of them is mounted."""
    ignored_settings: tuple[str, ...] = ()
    """Changed registry settings a reload cannot apply (`NOT_LIVE_KEYS`)."""


def server_settings_changed(spec: ServerSpec, old: RegistrySettings, new: RegistrySettings) -> bool:
    """Return whether a registry settings change changes what ``spec``'s server runs with.

    A key the server sets itself (``[servers.x] max_tools``) wins over the registry's; keys
    read at each call, and keys a reload cannot apply, never restart a server.
    """
    for key in type(new).model_fields:
        if key in _LIVE_KEYS or key in NOT_LIVE_KEYS:
            continue
        if key in _URL_KEYS and not isinstance(spec, HttpServer):
            continue
        own = getattr(spec, key, None)
        if own is None and getattr(old, key) != getattr(new, key):
            return True
    return False


class KeepPins(enum.Enum):
    """The type of `KEEP_PINS`."""

    PINS = "keep"


KEEP_PINS = KeepPins.PINS
"""`Registry.reload`'s default: the pins stay those the registry was opened with."""


def _pins_of(pins: Pins | None, server: str) -> tuple[object, ...]:
    """What ``pins`` pin of ``server``: its tools', then each content kind's hashes."""
    if pins is None:
        return ()
    content = pins.content or {}
    kinds = tuple(content[kind].get(server) if kind in content else None for kind in CONTENT_KINDS)
    return (pins.servers.get(server), *kinds)


class Reloader:
    """Applies new configs to a registry's servers, one reload at a time."""

    def __init__(self, servers: Servers) -> None:
        self._servers = servers
        self._lock: anyio.Lock | None = None

    async def reload(
        self,
        config: RegistryConfig | str | os.PathLike[str],
        *,
        pins: Pins | KeepPins | None = KEEP_PINS,
    ) -> ReloadResult:
        """See `Registry.reload`."""
        if not isinstance(config, RegistryConfig):
            config = load_config(config)  # raises before anything changes
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            servers = self._servers
            return await self._apply(config, servers.pins if pins is KEEP_PINS else pins)

    async def _apply(self, config: RegistryConfig, pins: Pins | None) -> ReloadResult:
        servers = self._servers
        old, ignored = servers.settings, _not_live(servers.settings, config.settings)
        if ignored:
            logger.warning(
                "reload: %s cannot change while the registry is open; kept as they were "
                "(open the registry again to apply them)",
                ", ".join(ignored),
            )
        new = config.settings.model_copy(update={key: getattr(old, key) for key in ignored})
        wanted = config.servers
        mounted = dict(servers.supervisors)
        removed = tuple(s for s in mounted if s not in wanted)
        changed = tuple(
            s
            for s, spec in wanted.items()
            if s in mounted
            and (
                mounted[s].spec != spec
                or server_settings_changed(spec, old, new)
                or _pins_of(servers.pins, s) != _pins_of(pins, s)
            )
        )
        added = tuple(s for s in wanted if s not in mounted)
        unchanged = tuple(s for s in wanted if s in mounted and s not in changed)
        for server in [*servers.failures]:  # a failure of a server no longer configured
            if server not in wanted:
                del servers.failures[server]
        async with anyio.create_task_group() as tg:  # an unmount never raises
            for server in (*removed, *changed):
                tg.start_soon(servers.unmount, server)
        servers.settings = new  # the mounts below, and calls from now on, read it
        servers.pins = pins  # and the tables
        outcomes = await mount_each(
            servers, {s: wanted[s] for s in wanted if s in (*changed, *added)}
        )
        failed = {o.server: o.error for o in outcomes if o.error is not None}
        result = ReloadResult(
            added=tuple(s for s in added if s not in failed),
            removed=removed,
            restarted=tuple(s for s in changed if s not in failed),
            unchanged=unchanged,
            failed=MappingProxyType(failed),
            ignored_settings=ignored,
        )
        _log(result)
        return result


def _not_live(old: RegistrySettings, new: RegistrySettings) -> tuple[str, ...]:
    return tuple(key for key in NOT_LIVE_KEYS if getattr(old, key) != getattr(new, key))


def _log(result: ReloadResult) -> None:
    """One line per server that a reload touched (unchanged ones at debug)."""
    for server in result.removed:
        logger.info("reload: server %r removed (closed)", server)
    for server in result.added:
        logger.info("reload: server %r added (mounted)", server)
    for server in result.restarted:
        logger.info("reload: server %r changed (restarted)", server)
    for server, exc in result.failed.items():
        logger.warning("reload: server %r failed to mount, left out: %s", server, exc.detail)
    for server in result.unchanged:
        logger.debug("reload: server %r unchanged", server)
