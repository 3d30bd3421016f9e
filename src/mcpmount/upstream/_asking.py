"""What an upstream server asks of its client, answered by the host's `ClientHandlers`.

The SDK's ``Client`` declares the sampling, elicitation or roots capability to a server
only when it is given the matching callback (elicitation then in both form and URL modes,
sampling with the sub-capabilities passed beside it), so `Asking` hands it a callback only
for the handlers the host gave: without one the capability is not offered, and the server
cannot ask.

Who asks: a "call" here is a tool call, or a ``prompts/get`` or ``resources/read``, which a
server may answer by asking too (`Asker.tool` then names the prompt or the resource). In
the 2026-07-28 era a server asks inside a call's result
(``InputRequiredResult``), and the SDK answers it by running the callbacks in the calling
task (or tasks it starts there), so a context variable set around the call names it
exactly. In the handshake era a streamable HTTP server asks on the SSE stream of the POST
that caused the question, and the SDK runs the callback in the context of the task that
reads that stream, which it started in the calling task's context: the variable names the
call exactly again, whatever else is in flight. A request on a stream of no call (stdio,
the GET stream, the old HTTP+SSE transport) is asked outside any call; then the asker is
the one call of this server in flight, if there is exactly one, and unknown otherwise.

Roots: a server whose question no client can answer (the host gave no roots handler, or
its handler answered None: no call to tell, or a client without roots) is told the roots
its config gives it (`ServerSpec.roots`, else the registry's), or none, with a warning
that says how to configure them.

A handler that raises (a timeout included) answers with an error and is logged; it never
reaches the connection, whose task group it would otherwise tear down. In the handshake
era the error is the answer to the server's request; in the 2026-07-28 era the SDK ends
the call with it instead, so the call fails with that error as an `UpstreamError`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import InitVar, dataclass, field
from typing import TypedDict

import anyio
import mcp_types
from mcp import Client, MCPError
from mcp.client import ClientRequestContext
from mcp.client.session import ElicitationFnT, ListRootsFnT, LoggingFnT, SamplingFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.config import ServerSpec
from mcpmount.handlers import Asker, ClientHandlers
from mcpmount.upstream._logs import UpstreamLog

__all__ = ["Asking"]

logger = logging.getLogger(__name__)


class Callbacks(TypedDict, total=False):
    """The SDK ``Client``'s arguments for the client side."""

    logging_callback: LoggingFnT
    log_level: mcp_types.LoggingLevel | None
    sampling_callback: SamplingFnT
    sampling_capabilities: mcp_types.SamplingCapability | None
    elicitation_callback: ElicitationFnT
    list_roots_callback: ListRootsFnT


@dataclass(frozen=True, eq=False, slots=True)
class _Call:
    """One call in flight; compared by identity, so equal calls stay apart."""

    tool: str
    context: object | None


_UNMARKED = nullcontext()
"""`Asking.calling` of a server that cannot ask: nothing to mark (reentrant, so shared)."""

_CALL: ContextVar[_Call | None] = ContextVar("mcpmount_upstream_call", default=None)
"""The call the current task is making, whichever server it went to."""


class _InFlight(AbstractContextManager[None]):
    """`Asking.calling`: a plain class, as every call passes through it."""

    __slots__ = ("_call", "_in_flight", "_token")

    def __init__(self, call: _Call, in_flight: list[_Call]) -> None:
        self._call = call
        self._in_flight = in_flight

    def __enter__(self) -> None:
        self._token = _CALL.set(self._call)
        self._in_flight.append(self._call)

    def __exit__(self, *exc_info: object) -> None:
        self._in_flight.remove(self._call)
        _CALL.reset(self._token)


@dataclass(eq=False)
class Asking:
    """One connection's answers to its server's requests, and the calls they belong to."""

    server: str
    spec: ServerSpec
    handlers: ClientHandlers | None
    log_level: InitVar[mcp_types.LoggingLevel | None] = None
    log: UpstreamLog = field(init=False)
    """The server's log messages and the level asked of it."""
    client: Client | None = None
    """The connection's SDK client from its handshake to its end, for requests outside calls."""
    roots: Sequence[str] = ()
    """The configured roots (``file://`` URIs): the answer when no client can tell."""
    _in_flight: list[_Call] = field(default_factory=list[_Call])

    def __post_init__(self, log_level: mcp_types.LoggingLevel | None) -> None:
        on_log = self.handlers.logging if self.handlers is not None else None
        self.log = UpstreamLog(self.server, self.spec, on_log, log_level)

    def calling(self, tool: str, context: object | None) -> AbstractContextManager[None]:
        """Mark a call to ``tool`` (its public name, or a prompt's, or a resource's registry
        URI) as in flight for its duration; free when the server cannot ask (`asks`)."""
        if not self.asks:
            return _UNMARKED
        return _InFlight(_Call(tool, context), self._in_flight)

    @property
    def asks(self) -> bool:
        """Whether the server may ask anything whose asker matters: sampling, elicitation
        or roots is offered (`callbacks`)."""
        handlers = self.handlers
        if self.roots:
            return True
        return handlers is not None and (
            handlers.sampling is not None
            or handlers.elicitation is not None
            or handlers.roots is not None
        )

    def asker(self) -> Asker:
        """Who is asking now: the call of this task, else the only call in flight, else none."""
        call = _CALL.get()
        if call is None or call not in self._in_flight:  # not a call to this server
            call = self._in_flight[0] if len(self._in_flight) == 1 else None
        if call is None:
            return Asker(self.server)
        return Asker(self.server, call.tool, call.context)

    async def set_log_level(self, level: mcp_types.LoggingLevel) -> None:
        """Ask for log messages at ``level`` and up, now if up and after a restart; never
        raises (see `UpstreamLog`)."""
        await self.log.set_level(level, self.client)

    async def roots_changed(self) -> None:
        """Send ``notifications/roots/list_changed``, if roots are offered; never raises.

        Only in the handshake era: in the 2026-07-28 era a server asks for the roots
        within each call, so it never holds a stale list.
        """
        no_roots = self.handlers is None or self.handlers.roots is None
        client = self.client
        if no_roots or client is None or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            await client.session.send_notification(mcp_types.RootsListChangedNotification())
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.info("server %r: could not tell it the roots changed: %r", self.server, exc)

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """Hand a URL elicitation's completion notice to its handler, if any; never raises."""
        handler = self.handlers.elicitation_complete if self.handlers is not None else None
        if handler is None:
            return
        try:
            await handler(self.server, elicitation_id)
        except Exception as exc:
            logger.warning(
                "server %r: the elicitation_complete handler failed: %r", self.server, exc
            )

    # -- the SDK's callbacks; each is handed to the Client only when its handler is set ---------

    def callbacks(self) -> Callbacks:
        """The ``Client`` arguments: logging, and a callback for each handler set, only those."""
        callbacks: Callbacks = {"logging_callback": self.log.receive, "log_level": self.log.level}
        handlers = self.handlers
        if handlers is None:
            if self.roots:
                callbacks["list_roots_callback"] = self._list_roots
            return callbacks
        if handlers.sampling is not None:
            callbacks["sampling_callback"] = self._sample
            callbacks["sampling_capabilities"] = handlers.sampling_capability
        if handlers.elicitation is not None:
            callbacks["elicitation_callback"] = self._elicit
        if handlers.roots is not None or self.roots:
            callbacks["list_roots_callback"] = self._list_roots
        return callbacks

    async def _sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> _Sampled:
        handler = self.handlers.sampling if self.handlers is not None else None
        if handler is None:
            return _unsupported("sampling")
        answer = await self._answer("sampling", lambda asker: handler(asker, params))
        if isinstance(answer, _Sampled):
            return answer
        return self._invalid("sampling", answer)

    async def _elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        handler = self.handlers.elicitation if self.handlers is not None else None
        if handler is None:
            return _unsupported("elicitation")
        answer = await self._answer("elicitation", lambda asker: handler(asker, params))
        if isinstance(answer, mcp_types.ElicitResult | mcp_types.ErrorData):
            return answer
        return self._invalid("elicitation", answer)

    async def _list_roots(
        self, context: ClientRequestContext
    ) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        handler = self.handlers.roots if self.handlers is not None else None
        answer = None if handler is None else await self._answer("roots", handler)
        if answer is None:  # no client can tell
            return self._configured_roots()
        if isinstance(answer, mcp_types.ListRootsResult | mcp_types.ErrorData):
            return answer
        return self._invalid("roots", answer)

    def _configured_roots(self) -> mcp_types.ListRootsResult:
        if not self.roots:
            logger.warning(
                "server %r asked for its roots, and no client can tell them (%s); answered "
                "none: give it roots = [...] in its table, or in [registry]",
                self.server,
                _asked_by(self.asker()),
            )
        roots = [mcp_types.Root(uri=uri) for uri in self.roots]  # pyright: ignore[reportArgumentType]
        return mcp_types.ListRootsResult(roots=roots)

    async def _answer(
        self, what: str, ask: Callable[[Asker], Awaitable[object]]
    ) -> object | mcp_types.ErrorData:
        """Run one handler; what it raises becomes an error answer (cancellation passes)."""
        asker = self.asker()
        try:
            return await ask(asker)
        except MCPError as exc:  # a handler's deliberate JSON-RPC error (e.g. a relayed one)
            logger.info(
                "server %r: the %s handler answered %s with an error: %s",
                self.server,
                what,
                _asked_by(asker),
                exc.message,
            )
            return exc.error
        except Exception as exc:
            logger.warning(
                "server %r: the %s handler failed for %s: %r",
                self.server,
                what,
                _asked_by(asker),
                exc,
            )
            message = f"the client's {what} handler failed ({type(exc).__name__})"
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)

    def _invalid(self, what: str, answer: object) -> mcp_types.ErrorData:
        logger.warning(
            "server %r: the %s handler returned %s for %s, not a result",
            self.server,
            what,
            type(answer).__name__,
            _asked_by(self.asker()),
        )
        message = f"the client's {what} handler returned an invalid answer"
        return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)


_Sampled = (
    mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
)


def _unsupported(what: str) -> mcp_types.ErrorData:
    """The answer when no handler is set (the capability was not offered, yet it was asked)."""
    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=f"{what} is not supported")


def _asked_by(asker: Asker) -> str:
    return f"tool {asker.tool!r}" if asker.tool is not None else "a request outside a known call"
