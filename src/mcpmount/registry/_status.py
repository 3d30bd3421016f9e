"""What the registry reports about each server: its status row, its call statistics, and
what the audit reads of it."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from mcpmount.audit import ServerListing
from mcpmount.catalog import StagedContent
from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import ServerError
from mcpmount.gates import needs_approval
from mcpmount.sandbox import mounts_of, summary
from mcpmount.tool import MountedTool
from mcpmount.upstream import ServerState, Supervisor

__all__ = [
    "CallStats",
    "MountOutcome",
    "ServerStatus",
    "listing_of",
    "notes_of",
    "status_json",
    "status_row",
    "status_rows",
]

_LATENCY_WINDOW = 256
"""How many of the latest answered calls the median is taken over."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One server's row in ``Registry.status()``."""

    server: str
    transport: str
    """``"stdio"`` or ``"http"``."""
    state: ServerState
    tools: int
    """Tools registered (listed and deferred)."""
    deferred: int
    required: bool
    pid: int | None = None
    startup_seconds: float | None = None
    restarts: int = 0
    """How many times the server was started again after dying."""
    calls: int = 0
    """Calls answered (results, including tool errors) since it was mounted."""
    p50_ms: float | None = None
    """Median latency of the last answered calls, in milliseconds."""
    p95_ms: float | None = None
    """The latency 95 % of the last answered calls took at most, in milliseconds."""
    error: str | None = None
    """Why it failed, or why its last restart or tool-list change was not applied."""
    notes: tuple[str, ...] = ()
    """What of its list is not mounted although it was not filtered out (see `notes_of`)."""
    cached: bool = False
    """Whether its tools come from cached lists its live list has not yet confirmed
    (its state says whether it is ``lazy``, ``starting`` or ``idle``)."""


@dataclass(frozen=True, slots=True)
class MountOutcome:
    """How mounting one server went (see ``Registry.mount_each``)."""

    server: str
    spec: ServerSpec
    seconds: float
    """How long it took to come up, or to fail."""
    tools: int = 0
    """Tools registered (listed and deferred)."""
    deferred: int = 0
    error: ServerError | None = None
    """Why it failed; None if it is mounted."""
    notes: tuple[str, ...] = ()
    """What of its list is not mounted although it was not filtered out (see `notes_of`)."""


@dataclass(eq=False)
class CallStats:
    """Answered calls of one server since it was mounted, and their recent latencies."""

    calls: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque[float](maxlen=_LATENCY_WINDOW))

    def record(self, seconds: float) -> None:
        """Count one answered call that took ``seconds``."""
        self.calls += 1
        self.latencies.append(seconds)

    def p50_ms(self) -> float | None:
        """The median latency of the recent calls in milliseconds; None before any."""
        return self.percentile_ms(50)

    def percentile_ms(self, percent: int) -> float | None:
        """The latency ``percent`` % of the recent calls took at most, in milliseconds (the
        nearest rank); None before any."""
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, len(ordered) * percent // 100)] * 1000


def notes_of(supervisor: Supervisor, tools: Sequence[MountedTool]) -> tuple[str, ...]:
    """Return what a mounted server's config or list asks for that is not mounted as asked.

    An override may name a tool that is not mounted (the server does not list it, or a
    filter drops it), and hidden characters are stripped from what it lists; neither stops
    the server, so each is a note rather than an error.
    """
    notes: list[str] = [
        f"hidden characters stripped from {found.kind} {found.name!r}: {found.summary()}"
        for found in supervisor.connection.hidden
    ]
    if unknown := sorted(supervisor.spec.overrides.keys() - {tool.raw_name for tool in tools}):
        notes.append(f"overrides name tools that are not mounted: {', '.join(map(repr, unknown))}")
    return tuple(notes)


def status_row(
    supervisor: Supervisor, tools: Sequence[MountedTool], stats: CallStats | None
) -> ServerStatus:
    """Return the status of one mounted server with its ``tools`` and call ``stats``."""
    connection = supervisor.connection
    stats = stats or CallStats()
    return ServerStatus(
        server=supervisor.server,
        transport=_transport(supervisor),
        state=supervisor.state,
        tools=len(tools),
        deferred=sum(e.deferred for e in tools),
        required=supervisor.spec.required,
        pid=connection.pid if connection.state is ServerState.READY else None,
        startup_seconds=connection.startup_seconds,
        restarts=supervisor.restarts,
        calls=stats.calls,
        p50_ms=stats.p50_ms(),
        p95_ms=stats.percentile_ms(95),
        error=supervisor.error or connection.error or connection.relist_error,
        notes=notes_of(supervisor, tools),
        cached=supervisor.cached,
    )


def status_rows(
    supervisors: Mapping[str, Supervisor],
    tools_of: Callable[[str], Sequence[MountedTool]],
    stats: Mapping[str, CallStats],
) -> list[ServerStatus]:
    """Return the status of every server in ``supervisors``, sorted by namespace."""
    return [
        status_row(supervisor, tools_of(server), stats.get(server))
        for server, supervisor in sorted(supervisors.items())
    ]


def status_json(
    rows: Sequence[ServerStatus],
    failed: Sequence[MountOutcome],
    specs: Mapping[str, ServerSpec],
    settings: RegistrySettings,
) -> list[dict[str, object]]:
    """Return the status as JSON-ready rows: what ``mcpmount status --json`` prints and a
    running ``serve`` publishes (`mcpmount.serve.ops.publish_status`).

    Args:
        rows: The mounted servers (``Registry.status()``).
        failed: The servers that failed to mount, after them (their state ``failed``).
        specs: Each server's spec, for how it is sandboxed and what its sandbox mounts
            (``-`` and None for one not there).
        settings: The registry's settings (its sandbox defaults).
    """

    def sandbox(server: str) -> str:
        spec = specs.get(server)
        return summary(spec, settings) if spec is not None else "-"

    def mounts(spec: ServerSpec | None) -> dict[str, object] | None:
        shown = mounts_of(spec, settings) if spec is not None else None
        return shown.as_json() if shown is not None else None

    report: list[dict[str, object]] = [
        {
            "server": row.server,
            "transport": row.transport,
            "sandbox": sandbox(row.server),
            "sandbox_mounts": mounts(specs.get(row.server)),
            "required": row.required,
            "state": str(row.state),
            "pid": row.pid,
            "tools": row.tools,
            "deferred": row.deferred,
            "restarts": row.restarts,
            "calls": row.calls,
            "p50_ms": row.p50_ms,
            "p95_ms": row.p95_ms,
            "error": row.error,
            "notes": list(row.notes),
            "cached": row.cached,
        }
        for row in rows
    ]
    report.extend(
        {
            "server": outcome.server,
            "transport": outcome.spec.transport,
            "sandbox": summary(outcome.spec, settings),
            "sandbox_mounts": mounts(outcome.spec),
            "required": outcome.spec.required,
            "state": "failed",
            "error": outcome.error.detail if outcome.error else None,
        }
        for outcome in failed
    )
    return report


def listing_of(
    supervisor: Supervisor,
    tools: Sequence[MountedTool],
    content: StagedContent | None,
    approval: str,
) -> ServerListing:
    """Return what the audit reads of one mounted server: its ``tools``, its published
    ``content``, which tools are gated under the registry's ``approval``, and what was
    stripped from its lists."""
    spec = supervisor.spec
    gated = frozenset(tool.raw_name for tool in tools if needs_approval(tool, spec, approval))
    return ServerListing(
        supervisor.server,
        spec,
        tuple(tools),
        gated,
        tuple(entry.definition for entry in content.prompts.values()) if content else (),
        content.resources if content else (),
        content.templates if content else (),
        supervisor.connection.hidden,
    )


def _transport(supervisor: Supervisor) -> str:
    """The spec's transport; for ``auto``, also what it chose (``auto (sse)``)."""
    chosen = supervisor.connection.transport.diagnostics.transport
    spec = supervisor.spec.transport
    return f"{spec} ({chosen})" if spec == "auto" and chosen else spec
