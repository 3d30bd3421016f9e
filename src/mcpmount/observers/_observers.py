"""Who is told of each tool call and each ``tool_search`` a registry runs.

A host adds a callback (``registry.observers.on_call(callback)``) and gets one event per
call of a mounted tool once it ended, whatever the outcome: which server and tool, how
long it took and how it ended. Only mounted tools produce events (a call of an unknown
name raises before), so a metric labelled by tool stays bounded by the tools mounted. A
call refused before it was sent (arguments JSON cannot carry, a denied approval) is not
an event: no server was called.

Callbacks run synchronously in the calling task, after the call: keep them quick. One
that raises is logged and does not change the call's outcome, nor stop the others.

Each call is also an OpenTelemetry span (`mcpmount.observers`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

import anyio
import mcp_types

from mcpmount.observers._tracing import mark_failed, mark_result, tracing, upstream_span
from mcpmount.search import ToolSearchCall
from mcpmount.tool import MountedTool

__all__ = ["CallEvent", "Observed", "Observers", "SearchEvent"]

logger = logging.getLogger(__name__)

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class CallEvent:
    """One call of a mounted tool, ended."""

    server: str
    """The server's namespace."""
    tool: str
    """The tool's public name (``<namespace>__<tool>``)."""
    seconds: float
    """From the call's start (a wait for its server to start included) to its end."""
    error: str | None = None
    """None: a result; ``"tool_error"``: an ``isError`` result; ``"cancelled"``: the
    caller gave up; otherwise the class of the error raised (``"CallTimeoutError"``)."""


@dataclass(frozen=True, slots=True)
class SearchEvent:
    """One run of the ``tool_search`` meta-tool."""

    seconds: float
    found: int
    """How many tools it returned."""


class Observed(contextlib.AbstractContextManager["Observed"]):
    """What a call under `Observers.calling` reports: its result, if it had one.

    Unobserved (no callback, no tracer provider), it is the whole context: nothing to time,
    trace or tell.
    """

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: mcp_types.CallToolResult | None = None

    def __exit__(self, *exc_info: object) -> None:
        return None


class Observers:
    """The callbacks a registry tells of its calls and searches."""

    def __init__(self) -> None:
        self._calls: list[Callable[[CallEvent], None]] = []
        self._searches: list[Callable[[SearchEvent], None]] = []

    def on_call(self, callback: Callable[[CallEvent], None]) -> Callable[[], None]:
        """Tell ``callback`` of every call from now on; returns what stops it."""
        self._calls.append(callback)
        return lambda: _discard(self._calls, callback)

    def on_search(self, callback: Callable[[SearchEvent], None]) -> Callable[[], None]:
        """Tell ``callback`` of every ``tool_search`` from now on; returns what stops it."""
        self._searches.append(callback)
        return lambda: _discard(self._searches, callback)

    def calling(
        self, entry: MountedTool, transport: str
    ) -> contextlib.AbstractContextManager[Observed]:
        """Time and trace one call of ``entry``; set ``result`` on what it yields.

        A call nobody observes (no callback, no tracer provider) pays for neither.
        """
        if not self._calls and not tracing():
            return Observed()
        return self._observed(entry, transport)

    @contextlib.contextmanager
    def _observed(self, entry: MountedTool, transport: str) -> Generator[Observed]:
        began = time.perf_counter()
        observed = Observed()
        with upstream_span(entry, transport) as span:
            try:
                yield observed
            except BaseException as exc:
                error = _classify(exc)
                mark_failed(span, exc, error)
                self._tell_call(CallEvent(entry.server, entry.name, _since(began), error))
                raise
            error = None
            if observed.result is not None:
                mark_result(span, observed.result)
                error = "tool_error" if observed.result.is_error else None
            self._tell_call(CallEvent(entry.server, entry.name, _since(began), error))

    def searching(self, search: Callable[[], ToolSearchCall]) -> ToolSearchCall:
        """Run one ``tool_search`` and tell of it."""
        began = time.perf_counter()
        return self._searched(began, search())

    async def searching_async(
        self, search: Callable[[], Awaitable[ToolSearchCall]]
    ) -> ToolSearchCall:
        """Run one ``tool_search`` that may wait (a query vector in a worker thread) and
        tell of it."""
        began = time.perf_counter()
        return self._searched(began, await search())

    def _searched(self, began: float, outcome: ToolSearchCall) -> ToolSearchCall:
        event = SearchEvent(_since(began), len(outcome.names))
        for callback in list(self._searches):
            _tell(callback, event)
        return outcome

    def _tell_call(self, event: CallEvent) -> None:
        for callback in list(self._calls):
            _tell(callback, event)


def _tell(callback: Callable[[E], None], event: E) -> None:
    try:
        callback(event)
    except Exception:
        logger.exception("an observer of the registry's calls failed on %r", event)


def _discard(callbacks: list[Callable[[E], None]], callback: Callable[[E], None]) -> None:
    with contextlib.suppress(ValueError):
        callbacks.remove(callback)


def _classify(exc: BaseException) -> str:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return "cancelled"
    return type(exc).__name__


def _since(began: float) -> float:
    return time.perf_counter() - began
