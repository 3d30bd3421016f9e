"""``/healthz`` and ``/readyz``: is the process alive, and should it get traffic.

``/healthz`` answers 200 as long as the process serves HTTP (a liveness probe: restart
it only when this fails). ``/readyz`` answers 200 when every required check passes, and
503 otherwise, with a short JSON body naming what is missing::

    {"status": "not ready", "failing": {"mounts": "the initial mounts are under way"}}
    {"status": "ready"}
    {"status": "degraded", "degraded": {"redis": "connection refused"}}

Readiness is a list of named checks (`Readiness.add`). A check is a callable that
returns None when it is fine, or the reason it is not. A *required* check that fails
makes ``/readyz`` answer 503; an optional one (``required=False``) only reports: the
replica keeps its traffic and ``/readyz`` says ``degraded`` with the reason (for a
dependency the replica can serve without, such as shared state it replaces with its
own). The front adds two required checks (`RegistryServer.readiness`):

- ``mounts``: the initial mounts are done;
- ``servers``: every mounted server with ``required = true`` is up: ready, or ``lazy``
  or ``idle`` (started on its next call). One starting, restarting or failed is not.

A reason may name servers and tools that some who probe may not see. Who may read the
reasons is the caller's to say (`health_routes`); the others read, for each failing check,
what it says to anyone: a `Reason`'s ``public`` text (``servers``: how many are down), or
`WITHHELD` for a plain string. Status codes are the same for everyone.

A check runs on every probe, on the event loop: it must read state, never wait (a check
of a network dependency reports what its owner's last attempt saw).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpmount.registry import Registry
from mcpmount.upstream import ServerState

__all__ = [
    "WITHHELD",
    "Check",
    "Readiness",
    "ReadinessReport",
    "Reason",
    "health_routes",
    "mounts_done",
    "required_servers_up",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a check fails, said twice: in full, and to anyone who probes."""

    detail: str
    """The full reason (it may name servers and tools)."""
    public: str
    """What anyone may read: nothing a limited token may not see."""


Check = Callable[[], str | Reason | None]
"""A readiness check: None when fine, else why not: a short sentence shown in full only to
those who may read the reasons, or a `Reason`."""

WITHHELD = "the reason is shown to an operator's token only"
"""What a plain string reason says to those who may not read it."""

UP_STATES = frozenset({ServerState.READY, ServerState.LAZY, ServerState.IDLE})
"""The states in which a required server counts as up."""


@dataclass(frozen=True, slots=True)
class ReadinessReport:
    """What the checks said, one probe."""

    failing: dict[str, Reason] = field(default_factory=dict[str, Reason])
    """Required checks that failed, with their reasons."""
    degraded: dict[str, Reason] = field(default_factory=dict[str, Reason])
    """Optional checks that failed, with their reasons."""

    @property
    def ready(self) -> bool:
        return not self.failing

    def body(self, *, detailed: bool = True) -> dict[str, object]:
        """The ``/readyz`` JSON body: with each reason in full, or as anyone may read it."""

        def said(reasons: dict[str, Reason]) -> dict[str, str]:
            return {n: r.detail if detailed else r.public for n, r in reasons.items()}

        if self.failing:
            status = "not ready"
        elif self.degraded:
            status = "degraded"
        else:
            status = "ready"
        body: dict[str, object] = {"status": status}
        if self.failing:
            body["failing"] = said(self.failing)
        if self.degraded:
            body["degraded"] = said(self.degraded)
        return body


class Readiness:
    """Named readiness checks; add one with `add`."""

    def __init__(self) -> None:
        self._checks: dict[str, tuple[Check, bool]] = {}

    def add(self, name: str, check: Check, *, required: bool = True) -> None:
        """Add the check ``name``; ``required=False`` reports it without failing readiness.

        Raises:
            ValueError: A check of that name exists.
        """
        if name in self._checks:
            raise ValueError(f"a readiness check named {name!r} exists already")
        self._checks[name] = (check, required)

    def remove(self, name: str) -> None:
        """Drop the check ``name``; does nothing if there is none."""
        self._checks.pop(name, None)

    def report(self) -> ReadinessReport:
        """Run every check. One that raises fails, with its error as the reason."""
        report = ReadinessReport()
        for name, (check, required) in list(self._checks.items()):
            try:
                reason = check()
            except Exception as exc:
                logger.exception("the readiness check %r failed", name)
                reason = f"the check failed: {type(exc).__name__}: {exc}"
            if isinstance(reason, str):
                reason = Reason(reason, WITHHELD)
            if reason is not None:
                (report.failing if required else report.degraded)[name] = reason
        return report


_MOUNTING = "the initial mounts are under way"


def mounts_done(mounted: anyio.Event | None) -> Check:
    """A check: the initial mounts are done (``mounted`` is set; None: nothing to wait for)."""

    def check() -> Reason | None:
        if mounted is None or mounted.is_set():
            return None
        return Reason(_MOUNTING, _MOUNTING)

    return check


def required_servers_up(registry: Registry) -> Check:
    """A check: every mounted server with ``required = true`` is up (see `UP_STATES`); to
    anyone it says how many are not, never which."""

    def check() -> Reason | None:
        down = [row for row in registry.status() if row.required and row.state not in UP_STATES]
        if not down:
            return None
        detail = "; ".join(
            f"required server {row.server!r} is {row.state}"
            + (f": {row.error}" if row.error else "")
            for row in down
        )
        count = "1 required server is" if len(down) == 1 else f"{len(down)} required servers are"
        return Reason(detail, f"{count} not up")

    return check


def health_routes(
    readiness: Readiness, may_read_reasons: Callable[[Request], Awaitable[bool]] | None = None
) -> list[Route]:
    """The ``/healthz`` and ``/readyz`` routes (GET and HEAD).

    Args:
        readiness: What ``/readyz`` checks.
        may_read_reasons: Whether a request may read the reasons in full; None: every one.
    """

    async def healthz(request: Request) -> Response:
        return _json(200, {"status": "alive"})

    async def readyz(request: Request) -> Response:
        report = readiness.report()
        detailed = may_read_reasons is None or await may_read_reasons(request)
        return _json(200 if report.ready else 503, report.body(detailed=detailed))

    return [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET", "HEAD"]),
    ]


def _json(status: int, body: dict[str, object]) -> Response:
    # Probes must not be cached by anything between them and the process.
    return Response(
        json.dumps(body),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )
