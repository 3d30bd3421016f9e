"""How a one-shot command mounts: only the servers it needs, from cached lists where it may.

``call``, ``prompt`` and ``read`` name one server's tool, prompt or resource: `needed_for`
keeps that server (and those with ``prefix = false``, whose names say nothing of their
server); the others are never started. A name of no server's namespace keeps them all,
each listed from its cached lists if it has them and started only if the name is its.
``tools``, ``search``, ``prompts`` and ``resources`` list what every server offers:
`from_cache` starts each ``lazy``, so a server whose lists are cached and fresh is
listed from them without being started, and one without is mounted and leaves its lists
for next time (``--live`` lists every server live). As under ``serve``, a server is
required only where its table says ``required = true`` (`required_as_written`): one that
fails or hangs (for its ``startup_timeout``) is named on stderr with why, and the others
are listed.

While servers mount, a terminal's stderr shows which are still pending (`Pending`);
nothing of it goes to stdout or to a non-terminal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from types import TracebackType

import anyio
from rich.console import Console
from rich.status import Status

from mcpmount.cli._shown import counted, shown
from mcpmount.cli.mounting._asking import COMMAND_LINE
from mcpmount.config import RegistryConfig, ServerSpec
from mcpmount.errors import MountError
from mcpmount.naming import SEPARATOR
from mcpmount.registry import MountOutcome, Registry, read_pins, required_as_written

__all__ = [
    "Pending",
    "from_cache",
    "listing",
    "live",
    "mount_showing",
    "mounted",
    "namespace_of",
    "needed_for",
    "server_of_uri",
]

logger = logging.getLogger("mcpmount.cli")

_NAMED = 4
"""Pending servers named on the status line; more are counted."""


def needed_for(config: RegistryConfig, namespace: str | None) -> RegistryConfig:
    """``config`` with only the servers that can hold a name of ``namespace``: that server
    and every one with ``prefix = false`` (whose names say nothing of their server).

    A name of no server's namespace may be any server's (``prefix = false``) or a typo:
    every server is kept then, ``lazy`` (`from_cache`), so that a server with cached
    lists is started only if the call is its own.
    """
    if namespace is None or namespace not in config.servers:
        return from_cache(config)
    servers = {
        name: spec for name, spec in config.servers.items() if name == namespace or not spec.prefix
    }
    return dataclasses.replace(config, servers=servers)


def namespace_of(name: str) -> str | None:
    """The namespace a public name starts with (``fs__read_file`` -> ``fs``), if any."""
    namespace, separator, _ = name.partition(SEPARATOR)
    return namespace if separator else None


def server_of_uri(uri: str) -> str | None:
    """The namespace of a registry URI (``mcpmount://fs/file:///a.txt`` -> ``fs``)."""
    scheme, separator, rest = uri.partition("://")
    return rest.partition("/")[0] if separator and scheme == "mcpmount" else None


def from_cache(config: RegistryConfig) -> RegistryConfig:
    """``config`` with every server ``lazy``: listed from its fresh cached lists
    without starting; one without a usable entry is mounted (and caches its lists)."""
    return _starting(config, "lazy")


def live(config: RegistryConfig) -> RegistryConfig:
    """``config`` with every server mounted from its live lists, never cached lists
    (``check`` and ``lock`` vouch for what the servers list now; ``--live``)."""
    return _starting(config, "eager")


def _starting(config: RegistryConfig, start: str) -> RegistryConfig:
    update = {"start": start}
    servers = {name: spec.model_copy(update=update) for name, spec in config.servers.items()}
    settings = config.settings.model_copy(update=update)
    return dataclasses.replace(config, settings=settings, servers=servers)


class Pending:
    """On a terminal, a status line on stderr naming the servers still mounting.

    Usable as a context manager; `ended` takes each outcome off. Off a terminal it
    shows nothing.
    """

    def __init__(self, err: Console, servers: Mapping[str, ServerSpec]) -> None:
        self._left = list(servers)
        self._total = len(self._left)
        self._status = Status(self._text(), console=err) if err.is_terminal else None

    def _text(self) -> str:
        done = self._total - len(self._left)
        named = ", ".join(self._left[:_NAMED])
        if len(self._left) > _NAMED:
            named += f" and {len(self._left) - _NAMED} more"
        return f"mounting {done}/{counted(self._total, 'server')}; waiting for {named}"

    def ended(self, outcome: MountOutcome) -> None:
        """Take ``outcome``'s server off the pending ones."""
        if outcome.server in self._left:
            self._left.remove(outcome.server)
        if self._status is not None and self._left:
            self._status.update(self._text())

    def __enter__(self) -> Pending:
        if self._status is not None and self._left:
            self._status.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._status is not None:
            self._status.stop()


async def mount_showing(
    registry: Registry,
    servers: Mapping[str, ServerSpec],
    err: Console,
    *,
    fail_fast: bool,
    on_outcome: Callable[[MountOutcome], None] | None = None,
) -> list[MountOutcome]:
    """Mount ``servers`` concurrently, whatever fails, with `Pending` on ``err``.

    With ``fail_fast`` the first required server that fails cancels the other mounts
    (which then have no outcome). Returns the outcomes in the order of ``servers``.
    """
    outcomes: list[MountOutcome] = []
    with Pending(err, servers) as pending, anyio.CancelScope() as scope:

        def ended(outcome: MountOutcome) -> None:
            outcomes.append(outcome)
            pending.ended(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
            if fail_fast and outcome.error is not None and outcome.spec.required:
                scope.cancel()

        await registry.mount_each(servers, on_outcome=ended)
    by_server = {outcome.server: outcome for outcome in outcomes}
    return [by_server[server] for server in servers if server in by_server]


@contextlib.asynccontextmanager
async def mounted(
    config: RegistryConfig, err: Console, *, use_lock: bool = True
) -> AsyncGenerator[Registry]:
    """Mount ``config``'s servers as `mcpmount.registry.open_registry` does (a required
    failure raises `MountError`, an optional one is named on ``err`` with why it is not
    mounted), showing on a terminal which are still pending; close them all on the way
    out."""
    pins = read_pins(config) if use_lock else None
    async with Registry(config.settings, pins=pins, handlers=COMMAND_LINE) as registry:
        outcomes = await mount_showing(registry, config.servers, err, fail_fast=True)
        failures = {o.server: o.error for o in outcomes if o.error is not None}
        if any(config.servers[server].required for server in failures):
            raise MountError(failures)
        for server, error in failures.items():
            err.print(shown(f"{server}: not mounted: {error.detail}", "yellow", lines=True))
        yield registry


@contextlib.asynccontextmanager
async def listing(
    config: RegistryConfig, from_live: bool, err: Console
) -> AsyncGenerator[Registry]:
    """Mount ``config``'s servers to list what they offer: from their cached lists
    (`from_cache`), or with ``from_live`` from their live lists. Logs (``-v``) how many
    were listed from a cache: a transcript of the same command reads the same either way."""
    chosen = required_as_written(live(config) if from_live else from_cache(config))
    async with mounted(chosen, err) as registry:
        if cached := sum(row.cached for row in registry.status()):
            listed = counted(cached, "server")
            logger.info("listed %s from cached lists; --live starts them to list", listed)
        yield registry
