"""An OpenTelemetry SDK tracer provider for the tests, spans kept in memory.

A process has one global tracer provider, set once: the first test that asks for
`recorded_spans` installs it, and each test sees only the spans ended while it ran (a
switch in front of the exporter keeps later tests from filling memory).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["Recorder", "recorded_spans"]


class Recorder(SpanProcessor):
    """Passes ended spans to an in-memory exporter while it is on."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self._inner = SimpleSpanProcessor(self.exporter)
        self.on = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self._inner.on_end(span)

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()


_recorder: Recorder | None = None


@contextmanager
def recorded_spans() -> Generator[Recorder]:
    """Record the spans this process ends inside the block."""
    global _recorder
    if _recorder is None:
        _recorder = Recorder()
        provider = TracerProvider()
        provider.add_span_processor(_recorder)
        trace.set_tracer_provider(provider)
    _recorder.exporter.clear()
    _recorder.on = True
    try:
        yield _recorder
    finally:
        _recorder.on = False
        _recorder.exporter.clear()
