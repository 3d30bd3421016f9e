"""The published side of the registry's servers: which are mounted, their names in the
tables, and the task group they run in.

`ServerTables` is what `Servers` builds on. A server's tools, prompts and resources become
visible in one synchronous block (`ServerTables.publish`: `Library.stage`,
`Catalog.publish`, the library's commit), after its connection is up, its lists checked
and its names assigned; any failure before that reaps the server and leaves the tables
exactly as they were. Nothing here starts, restarts or closes a server.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Coroutine
from typing import Any, TypeVarTuple

import mcp_types
from anyio.abc import TaskGroup

from mcpmount import naming
from mcpmount.catalog import Catalog, Library, Pins, registry_uri, split_uri
from mcpmount.config import RegistrySettings
from mcpmount.errors import (
    ConfigError,
    RegistryError,
    ServerError,
    ServerStartError,
    UnknownResourceError,
)
from mcpmount.gates import warn_unmatched
from mcpmount.registry._status import CallStats
from mcpmount.upstream import Connection, ServerContent, Supervisor

__all__ = ["ServerTables", "check_namespaces"]

Args = TypeVarTuple("Args")


class ServerTables:
    """The mounted servers by namespace, their tables, and the task group they run in.

    Args:
        settings, pins: The registry's (see `Registry`).
    """

    def __init__(self, settings: RegistrySettings, pins: Pins | None) -> None:
        self.settings = settings
        """Names, timeouts and limits; a reload replaces them."""
        self.catalog = Catalog(settings, pins)
        """The tool table."""
        self.library = Library(settings, pins)
        """The prompt and resource tables."""
        self.supervisors: dict[str, Supervisor] = {}
        """Every mounted server (dormant, restarting and failed ones too)."""
        self.failures: dict[str, ServerError] = {}
        """Servers that failed to mount and were left out, with their errors."""
        self.stats: dict[str, CallStats] = {}
        self.generation = 0
        """Counts publishes and forgets (what is built from every server is stale if it grew)."""
        self._pins = pins
        self._tg: TaskGroup | None = None
        self._closed = False

    @property
    def pins(self) -> Pins | None:
        """The lock file's pins the servers are held to (a reload may replace them)."""
        return self._pins

    @pins.setter
    def pins(self, pins: Pins | None) -> None:
        self._pins = self.catalog.pins = self.library.pins = pins

    def start_soon(
        self, task: Callable[[*Args], Coroutine[Any, Any, object]], *args: *Args
    ) -> None:
        """Run ``task`` in the servers' task group (the registry must be open)."""
        self._task_group().start_soon(task, *args)

    def _task_group(self) -> TaskGroup:
        if self._tg is None or self._closed:
            raise RuntimeError("the registry is not open; use `async with Registry(...)`")
        return self._tg

    def publish(
        self,
        supervisor: Supervisor,
        tools: list[mcp_types.Tool],
        content: ServerContent,
        *,
        first: bool,
    ) -> None:
        """Publish a server's (new) lists; synchronous, so nothing interleaves.

        Raises:
            ServerStartError: The registry or the server is closing.
            ToolListError, NameCollisionError, DefinitionChangedError: See `Catalog.publish`.
        """
        server = supervisor.server
        if self._closed or supervisor.closing:
            raise ServerStartError(server, "the registry or the server is closing")
        staged = self.library.stage(  # raises, or changes nothing
            server,
            supervisor.spec,
            content.prompts,
            content.resources,
            content.templates,
            subscribe=content.subscribe,
        )
        self.catalog.publish(server, supervisor.spec, tools, first=first)
        self._compute_vectors()
        self.library.commit(staged)
        warn_unmatched(server, supervisor.spec, tools)
        self.supervisors[server] = supervisor
        self.generation += 1
        if first:
            self.stats[server] = CallStats()

    def forget(self, supervisor: Supervisor) -> None:
        """Drop a server's names, synchronously; a no-op if it is already gone."""
        if self.supervisors.get(supervisor.server) is not supervisor:
            return
        del self.supervisors[supervisor.server]
        self.generation += 1
        del self.stats[supervisor.server]
        self.catalog.forget(supervisor.server)
        self.library.forget(supervisor.server)
        self._compute_vectors()

    def _compute_vectors(self) -> None:
        """semantic_model: compute waiting tool vectors (and crowding) off the loop."""
        if self.catalog.vectors_pending and not self._closed:
            self.start_soon(self.catalog.compute_vectors)

    def _relisted(
        self, connection: Connection, tools: list[mcp_types.Tool], content: ServerContent
    ) -> None:
        """Apply re-listed lists (the server said one changed); raise to keep the old."""
        supervisor = self.supervisors.get(connection.server)
        if supervisor is None or supervisor.connection is not connection:
            return
        try:
            self.publish(supervisor, tools, content, first=False)
        except RegistryError as exc:
            supervisor.error = str(exc)
            raise
        supervisor.error = None

    def _updated(self, connection: Connection, uri: str) -> None:
        """A server said a resource changed: tell the update listeners its registry URI."""
        supervisor = self.supervisors.get(connection.server)
        if supervisor is not None and supervisor.connection is connection:
            self.library.updated(
                registry_uri(connection.server, uri, prefix=supervisor.spec.prefix)
            )

    def route(self, uri: str) -> tuple[str, str]:
        """Return the server and the server's own URI of a registry URI, or of a URI of a
        server that keeps its own (``prefix = false``, `Library.owner_of_uri`).

        Raises:
            UnknownResourceError: ``uri`` is neither.
        """
        if (owned := self.library.owner_of_uri(uri)) is not None:
            return owned
        server, raw = split_uri(uri)
        supervisor = self.supervisors.get(server)
        if supervisor is None or not supervisor.spec.prefix:
            raise UnknownResourceError(uri, f"no mounted server has the namespace {server!r}")
        return server, raw

    def timeout(self, supervisor: Supervisor, timeout: float | None) -> float:
        """Return the seconds a request may take: ``timeout``, else the server's call
        timeout, else the registry's."""
        if timeout is not None and not timeout > 0:  # NaN too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        return timeout or supervisor.connection.effective.call_timeout


def check_namespaces(servers: Collection[str]) -> None:
    """Raise one ``ConfigError`` naming every invalid namespace; nothing is started then."""
    bad = [
        f"servers.{server}: {problem}"
        for server in servers
        if (problem := naming.namespace_problem(server)) is not None
    ]
    if bad:
        raise ConfigError("<mount>", bad)
