"""Reloading a served config: on SIGHUP, and when its file changes.

`Reloads.run` applies the config file anew with `Registry.reload` each time it is asked,
with the pins of the lock file beside it as they are now (so after ``mcpmount lock``
approved a server's new definitions, a reload mounts it again): by SIGHUP (`on_sighup`)
or by a change of the file, its lock file or its policy file when that is beside it
(`watch_file`, with ``watchfiles``; their directory is watched, so an editor that saves
by writing a new file and renaming it over the old one is seen too). Requests that come
while a reload runs, or before the first mounts are done, are folded into one reload
after it. A config error is logged and changes nothing; the clients learn of what did
change through the registry's change path (`mcpmount.serve.sessions._changes`). A reload
first stops the retries of the servers that are down (it mounts them anew, from the file
as it is now); those that fail again are retried from the start
(`mcpmount.serve.front._retries`).
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from watchfiles import Change, awatch  # pyright: ignore[reportUnknownVariableType] (trio's Event)

from mcpmount.catalog import lock_path
from mcpmount.config import RegistryConfig, load_config
from mcpmount.errors import ConfigError
from mcpmount.policy import Policy
from mcpmount.registry import Registry, read_pins, required_as_written
from mcpmount.serve.front import Retries

__all__ = ["Reloads"]

logger = logging.getLogger(__name__)


class Reloads:
    """Reloads of one served config file.

    Args:
        registry: The served registry.
        path: The config file to load anew.
        retries: The servers that are down, retried.
        current: Holds the config served now; each reload puts its own in.
        on_policy: Called after a reload whose policy (``[serve] policy``) is not the one
            served before: what each client may see changed.
    """

    def __init__(
        self,
        registry: Registry,
        path: Path,
        retries: Retries,
        current: list[RegistryConfig],
        on_policy: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._on_policy = on_policy
        self._registry = registry
        self._path = path
        self._retries = retries
        self._current = current
        self._asked = anyio.Event()

    def ask(self, why: str) -> None:
        """Ask for a reload as soon as the one running (if any) is done."""
        logger.info("%s: reloading %s", why, self._path)
        self._asked.set()

    async def run(self, mounted: anyio.Event) -> None:
        """Reload each time it is asked, once ``mounted`` is set; runs until cancelled."""
        await mounted.wait()
        while True:
            await self._asked.wait()
            self._asked = anyio.Event()
            try:
                config = required_as_written(load_config(self._path))
                pins = read_pins(config)
                await self._retries.stop()  # the reload mounts them now, from the file as it is
                result = await self._registry.reload(config, pins=pins)
            except ConfigError as exc:
                logger.error("reload refused, nothing changed: %s", exc)
                continue
            before, self._current[:] = self._current[0].serve.rules, [config]
            after = config.serve.rules
            if self._on_policy is not None and _source(before) != _source(after):
                await self._on_policy()
            for server, error in result.failed.items():
                self._retries.failed(server, config.servers[server], error)
            logger.info(
                "reloaded %s: %d added, %d removed, %d restarted, %d unchanged, %d failed",
                self._path,
                len(result.added),
                len(result.removed),
                len(result.restarted),
                len(result.unchanged),
                len(result.failed),
            )

    async def on_sighup(self) -> None:
        """Ask for a reload at each SIGHUP; runs until cancelled."""
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            async for _ in signals:
                self.ask("SIGHUP")

    async def watch_file(self) -> None:
        """Ask for a reload each time the file or its lock file is written, replaced or
        created (or the lock file deleted); runs until cancelled."""
        path = self._path
        lock = lock_path(path)
        stop = anyio.Event()

        def is_config(change: Change, changed: str) -> bool:
            policy = self._current[0].serve.policy  # beside the config: watched too
            named = (path, Path(policy)) if policy is not None else (path,)
            written = change is not Change.deleted and Path(changed) in named
            return Path(changed) == lock or written

        async def stop_when_cancelled() -> None:
            # The watcher's thread sees ``stop`` within a moment; a cancel alone would wait
            # for the watcher's own timeout (seconds) before the thread returns.
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_when_cancelled)
            async for _ in awatch(
                path.parent, watch_filter=is_config, stop_event=stop, recursive=False, debounce=300
            ):
                self.ask("the config file changed")


def _source(policy: Policy | None) -> str | None:
    return None if policy is None else policy.source
