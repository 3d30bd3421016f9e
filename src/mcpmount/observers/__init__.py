"""What a registry tells about the work it does: observers and spans.

`Observers` (``_observers``) tells a host's callbacks of each tool call that ended
(`CallEvent`) and each ``tool_search`` (`SearchEvent`); `serve`'s metrics are one such
host. Each upstream call is also a span of the OpenTelemetry API (``_tracing``) once a
tracer provider is set; a call with no callback and no tracer provider is neither timed
nor traced. `mcpmount.registry` owns one `Observers` per registry.
"""

from mcpmount.observers._observers import CallEvent, Observed, Observers, SearchEvent

__all__ = ["CallEvent", "Observed", "Observers", "SearchEvent"]
