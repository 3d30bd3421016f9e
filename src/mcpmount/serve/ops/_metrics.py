"""Prometheus metrics of a served registry, at ``/metrics``.

The labels name every server and tool, so who may read them is the caller's to say
(`Metrics.route`; `mcpmount.serve.ops.OpsAccess`): a request refused is answered 401.

Every metric lives in the front's own ``CollectorRegistry`` (never prometheus_client's
process-wide default one), so serving changes nothing outside the front and two fronts in
one process do not share counts.

==============================================  =========  ======================================
``mcpmount_tool_calls_total``                   counter    server, tool: calls that ended
``mcpmount_tool_call_errors_total``             counter    server, tool, error: the calls that
                                                           failed (``tool_error``: an ``isError``
                                                           result; ``cancelled``; or the error's
                                                           class, e.g. ``CallTimeoutError``)
``mcpmount_tool_call_duration_seconds``         histogram  server, tool: how long calls took
``mcpmount_tool_search_duration_seconds``       histogram  how long ``tool_search`` took
``mcpmount_server_state``                       gauge      server, state: 1 for the state it is
                                                           in, 0 for the others
``mcpmount_server_restarts_total``              counter    server: restarts after it died
``mcpmount_server_tools``                       gauge      server: its tools (deferred included)
==============================================  =========  ======================================

``tool`` is the public name (``<namespace>__<tool>``). Calls are counted from the
registry's observers (`mcpmount.registry.Observers`), which report only mounted tools, so
the label sets are bounded by the tools mounted during the process's life; a call of an
unknown name is not counted. The server rows are read from ``Registry.status()`` at each
scrape; an optional server that failed to mount is in state ``failed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpmount.registry import CallEvent, Registry, SearchEvent
from mcpmount.upstream import ServerState

__all__ = ["Metrics"]

CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
"""Seconds: a tool call may take from milliseconds to the longest call timeout."""

SEARCH_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
"""Seconds: a search runs in memory."""


class Metrics:
    """A registry's metrics; built by the front, which serves `route` at ``/metrics``."""

    def __init__(self, registry: Registry) -> None:
        self.collectors = CollectorRegistry(auto_describe=True)
        """Where every metric of this front lives (not prometheus_client's global one)."""
        self._calls = Counter(
            "mcpmount_tool_calls",
            "Tool calls that ended, by server and tool.",
            ["server", "tool"],
            registry=self.collectors,
        )
        self._errors = Counter(
            "mcpmount_tool_call_errors",
            "Tool calls that failed, by server, tool and error.",
            ["server", "tool", "error"],
            registry=self.collectors,
        )
        self._latency = Histogram(
            "mcpmount_tool_call_duration_seconds",
            "How long tool calls took, by server and tool.",
            ["server", "tool"],
            buckets=CALL_BUCKETS,
            registry=self.collectors,
        )
        self._search = Histogram(
            "mcpmount_tool_search_duration_seconds",
            "How long tool_search took.",
            buckets=SEARCH_BUCKETS,
            registry=self.collectors,
        )
        self.collectors.register(_Servers(registry))
        self._unheard = (
            registry.observers.on_call(self._called),
            registry.observers.on_search(self._searched),
        )

    def stop_counting(self) -> None:
        """Stop hearing of calls and searches (where nothing will ever read them): each call
        is then spared the observer's timing and counting."""
        for unhear in self._unheard:
            unhear()

    def _called(self, event: CallEvent) -> None:
        self._calls.labels(event.server, event.tool).inc()
        self._latency.labels(event.server, event.tool).observe(event.seconds)
        if event.error is not None:
            self._errors.labels(event.server, event.tool, event.error).inc()

    def _searched(self, event: SearchEvent) -> None:
        self._search.observe(event.seconds)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.collectors)

    def route(self, may_read: Callable[[Request], Awaitable[bool]] | None = None) -> Route:
        """The ``/metrics`` route; a request ``may_read`` refuses is answered 401 (None: every
        request may read)."""

        async def metrics(request: Request) -> Response:
            if may_read is not None and not await may_read(request):
                return Response(
                    "a bearer token for the metrics is needed\n",
                    status_code=401,
                    media_type="text/plain",
                    headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
                )
            return Response(self.exposition(), media_type=CONTENT_TYPE_LATEST)

        return Route("/metrics", metrics, methods=["GET"])


class _Servers(Collector):
    """The servers' states, restarts and tool counts, read at each scrape."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def describe(self) -> Iterable[Metric]:
        return self._families()

    def collect(self) -> Iterable[Metric]:
        states, restarts, tools = self._families()
        for row in self._registry.status():
            _add_state(states, row.server, row.state)
            restarts.add_metric([row.server], row.restarts)
            tools.add_metric([row.server], row.tools)
        for server in sorted(self._registry.failures):
            _add_state(states, server, ServerState.FAILED)
        return [states, restarts, tools]

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, CounterMetricFamily, GaugeMetricFamily]:
        return (
            GaugeMetricFamily(
                "mcpmount_server_state",
                "1 for the state each server is in, 0 for the others.",
                labels=["server", "state"],
            ),
            CounterMetricFamily(
                "mcpmount_server_restarts",
                "Restarts of each server after it died.",
                labels=["server"],
            ),
            GaugeMetricFamily(
                "mcpmount_server_tools",
                "Tools of each mounted server, deferred ones included.",
                labels=["server"],
            ),
        )


def _add_state(family: GaugeMetricFamily, server: str, state: ServerState) -> None:
    for each in ServerState:
        family.add_metric([server, each.value], 1.0 if each is state else 0.0)
