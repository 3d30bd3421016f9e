"""Upstream sessions per client: one connection per client of a ``per_client`` server.

A server with ``sessions = "per_client"`` keeps its shared connection (the one the
supervisor owns) for listing, and opens one more connection per client key (`ClientKey`)
for that client's calls, prompt gets, resource reads and completions: its own HTTP session,
or its own process for stdio. So state the server keeps per session (an open page, a
working directory, a login) is that client's alone, and what it asks on such a session
(sampling, elicitation, roots, even on its standalone stream, outside any request) has
one client to go to: the `Asking` of that connection sees only that client's calls.

A client's connection is opened on its first use, closed when its client ends
(`ClientSessions.end`), when it went ``session_idle_timeout`` seconds without a request,
or when the server is unmounted (`ClientSessions.aclose`, run by its closer). At most
``max_client_sessions`` are open at once: past it a new client's request is refused with
`ClientSessionsFullError`, which says what to do; the clients that have one go on.

Whose request it is rides on the call's ``context`` (`client_key_of`): the context may be
a `ClientKey` itself or carry one as ``client_key`` (serve's `Downstream` does). With no
key (the library's default) the shared connection serves the request.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpmount.config import HttpServer, ServerSpec
from mcpmount.errors import ClientSessionsFullError, ServerNotRunningError
from mcpmount.upstream._connection import Connection
from mcpmount.upstream._state import ServerState

__all__ = [
    "ClientKey",
    "ClientSessions",
    "ClientSessionsFullError",
    "client_key_of",
    "pool_identity",
    "uses_pool",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClientKey:
    """Whose request it is, for a server whose sessions are per client."""

    id: str
    """What a client's session is kept under: in serve, ``http:<Mcp-Session-Id>``, a pipe,
    ``conv:<conversation>`` or ``principal:<identity>`` (see docs/serve.md)."""

    principal: str = ""
    """The identity of the principal the request came with (``""``: no token)."""


def client_key_of(context: object | None) -> ClientKey | None:
    """The `ClientKey` a call's ``context`` is, or carries as ``client_key``; None if none."""
    if isinstance(context, ClientKey):
        return context
    key = getattr(context, "client_key", None)
    return key if isinstance(key, ClientKey) else None


def uses_pool(spec: ServerSpec, key: ClientKey) -> bool:
    """Whether ``key``'s requests to ``spec``'s server get a connection of its own: under
    ``sessions = "per_client"``, or, for a principal with a token, under per-principal
    credentials (each principal's session carries its own)."""
    return spec.sessions == "per_client" or (bool(key.principal) and _per_principal(spec))


def pool_identity(spec: ServerSpec, key: ClientKey) -> str:
    """What ``key``'s connection to ``spec``'s server is kept under: its client's, or,
    with shared sessions but per-principal credentials, its principal's."""
    if spec.sessions == "per_client":
        return key.id
    return f"principal:{key.principal}"


def _per_principal(spec: ServerSpec) -> bool:
    """Whether ``spec`` logs each principal in by itself (``credentials``, of ``oauth``)."""
    if not isinstance(spec, HttpServer) or spec.oauth is None:
        return False
    return spec.oauth.credentials == "per_principal"


OpenConnection = Callable[[ClientKey], Awaitable[Connection]]
"""Starts a connection for a client (in the registry's task group) and returns it ready."""


@dataclass(eq=False)
class _Session:
    """One client's connection, and what closes it when idle."""

    key: ClientKey
    opened: anyio.Event = field(default_factory=anyio.Event)
    connection: Connection | None = None
    error: BaseException | None = None
    busy: int = 0
    last_use: float = field(default_factory=anyio.current_time)
    watch: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class ClientSessions:
    """One ``per_client`` server's connections by client; see the module docstring.

    Args:
        server: Its namespace.
        spec: Its spec (``session_idle_timeout``, ``max_client_sessions``).
        open_connection: Starts one client's connection.
        start_soon: Runs a task beside the registry's servers (the idle watches).
    """

    def __init__(
        self,
        server: str,
        spec: ServerSpec,
        open_connection: OpenConnection,
        start_soon: Callable[[Callable[[], Coroutine[Any, Any, object]]], None],
    ) -> None:
        self.server = server
        self.spec = spec
        self._open = open_connection
        self._start_soon = start_soon
        self._sessions: dict[str, _Session] = {}
        self._closed = False

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def connections(self) -> list[Connection]:
        """Every client's open (or opening) connection."""
        return [s.connection for s in self._sessions.values() if s.connection is not None]

    async def connection(self, key: ClientKey, name: str, kind: str = "tool") -> Connection:
        """Return ``key``'s connection, opened on first use (for ``name``, a ``kind``).

        Raises:
            ClientSessionsFullError: A new client past ``max_client_sessions``.
            ServerNotRunningError: The server is closing, or its client's connection could
                not start (why).
        """
        if self._closed:
            raise ServerNotRunningError(self.server, name, "it is closing", kind=kind)
        identity = pool_identity(self.spec, key)
        session = self._sessions.get(identity)
        if session is not None and session.opened.is_set() and not _up(session):
            await self._drop(identity, session)  # died or failed: open a new one
            session = None
        if session is None:
            if len(self._sessions) >= self.spec.max_client_sessions:
                raise ClientSessionsFullError(
                    self.server, name, self.spec.max_client_sessions, kind=kind
                )
            session = self._sessions[identity] = _Session(key)
            await self._start(identity, session)
        else:
            await session.opened.wait()
        if session.connection is None:
            reason = f"its session for this client did not start: {session.error}"
            raise ServerNotRunningError(self.server, name, reason, kind=kind)
        return session.connection

    def using(self, connection: Connection) -> _Use:
        """Count a request on ``connection`` in flight (an idle close waits for none)."""
        for session in self._sessions.values():
            if session.connection is connection:
                return _Use(session)
        return _Use(None)

    async def _start(self, identity: str, session: _Session) -> None:
        try:
            session.connection = await self._open(session.key)
        except BaseException as exc:  # a RegistryError, the transport's, or a cancellation
            session.error = exc
            if self._sessions.get(identity) is session:
                del self._sessions[identity]  # it holds no place under the cap
            if not isinstance(exc, Exception):
                raise
            logger.warning("server %r: a client's session did not start: %s", self.server, exc)
        finally:
            session.opened.set()
        if session.connection is not None:
            logger.info(
                "server %r: opened a session for client %s (%d open)",
                self.server,
                identity,
                len(self._sessions),
            )
            self._start_soon(lambda: self._watch(identity, session))

    async def _watch(self, identity: str, session: _Session) -> None:
        """Close ``session`` once it went ``session_idle_timeout`` seconds unused."""
        timeout = self.spec.session_idle_timeout
        with session.watch:
            while True:
                left = session.last_use + timeout - anyio.current_time()
                if session.busy == 0 and left <= 0:
                    break
                await anyio.sleep(max(left, 0.05) if session.busy == 0 else timeout)
            logger.info(
                "server %r: client %s idled out; closing its session", self.server, identity
            )
        if not session.watch.cancel_called:
            await self._drop(identity, session)

    async def end(self, identity: str) -> None:
        """Close the connection of the client kept under ``identity``, if it has one."""
        session = self._sessions.get(identity)
        if session is not None:
            logger.info("server %r: client %s ended; closing its session", self.server, identity)
            await self._drop(identity, session)

    async def _drop(self, identity: str, session: _Session) -> None:
        if self._sessions.get(identity) is session:
            del self._sessions[identity]
        session.watch.cancel()
        await session.opened.wait()
        if session.connection is not None:
            await session.connection.aclose()

    async def aclose(self) -> None:
        """Close every client's connection; no new one opens. Idempotent, never raises."""
        self._closed = True
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for identity, session in list(self._sessions.items()):
                    tg.start_soon(self._drop, identity, session)


def _up(session: _Session) -> bool:
    connection = session.connection
    return connection is not None and connection.state is ServerState.READY


class _Use:
    """`ClientSessions.using`: counts a request in flight and when the last one ended."""

    __slots__ = ("_session",)

    def __init__(self, session: _Session | None) -> None:
        self._session = session

    def __enter__(self) -> None:
        if self._session is not None:
            self._session.busy += 1

    def __exit__(self, *exc_info: object) -> None:
        if self._session is not None:
            self._session.busy -= 1
            self._session.last_use = anyio.current_time()
