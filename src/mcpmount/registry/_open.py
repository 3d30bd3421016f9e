"""``open_registry``: a config's servers, mounted for the length of an ``async with``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncGenerator, Sequence

from mcpmount.catalog import Pins, lock_path
from mcpmount.config import RegistryConfig, load_config
from mcpmount.errors import ConfigError
from mcpmount.handlers import Approver, ClientHandlers, Interceptor
from mcpmount.registry._registry import Registry

__all__ = ["open_registry", "read_pins"]


@contextlib.asynccontextmanager
async def open_registry(
    config: RegistryConfig | str | os.PathLike[str],
    *,
    fail_fast: bool = True,
    use_lock: bool = True,
    handlers: ClientHandlers | None = None,
    approver: Approver | None = None,
    interceptors: Sequence[Interceptor] = (),
    refresh_cache: bool = False,
) -> AsyncGenerator[Registry]:
    """Mount every server of ``config`` concurrently; close them all on the way out.

    If a lock file lies beside the config file (``x.toml`` -> ``x.lock``, written by
    ``mcpmount lock``), its pins are held against every server's tools.

    Args:
        config: A loaded config, or the path of a TOML (or ``mcpServers`` JSON) file.
        fail_fast: Cancel the other mounts as soon as a required server fails.
        use_lock: Hold the tools against the lock file, if there is one.
        handlers: The host's answers to what servers ask; see `Registry`.
        approver: Decides the calls an approval gate holds; see `Registry`.
        interceptors: Hooks before and after every call; see `Registry.intercept`.
        refresh_cache: Ignore cached lists: mount every server from its live lists
            and write its entry, whatever its ``start``.

    Raises:
        ConfigError: The config file (or its lock file) is invalid.
        MountError: A required server failed; every server started was closed first.
    """
    if not isinstance(config, RegistryConfig):
        config = load_config(config)
    pins = read_pins(config) if use_lock else None
    async with Registry(
        config.settings,
        pins=pins,
        handlers=handlers,
        approver=approver,
        interceptors=interceptors,
        refresh_cache=refresh_cache,
    ) as registry:
        await registry.mount_all(config.servers, fail_fast=fail_fast)
        yield registry


def read_pins(config: RegistryConfig) -> Pins | None:
    """Return the pins of the lock file beside ``config``'s file, if there is one.

    Raises:
        ConfigError: The lock file exists but cannot be read.
    """
    if config.path is None:
        return None
    path = lock_path(config.path)
    try:
        return Pins.read(path)
    except ValueError as exc:
        raise ConfigError(str(path), [str(exc)]) from None
