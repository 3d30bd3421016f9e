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

A check runs on every probe, on the event loop: it must read state, never wait (a check
of a network dependency reports what its owner's last attempt saw).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpmount.registry import Registry
from mcpmount.upstream import ServerState

__all__ = [
    "Check",
    "Readiness",
    "ReadinessReport",
    "health_routes",
    "mounts_done",
    "required_servers_up",
]

logger = logging.getLogger(__name__)

Check = Callable[[], str | None]
"""A readiness check: None when fine, else why not (a short sentence)."""

UP_STATES = frozenset({ServerState.READY, ServerState.LAZY, ServerState.IDLE})
"""The states in which a required server counts as up."""


@dataclass(frozen=True, slots=True)
class ReadinessReport:
    """What the checks said, one probe."""

    failing: dict[str, str] = field(default_factory=dict[str, str])
    """Required checks that failed, with their reasons."""
    degraded: dict[str, str] = field(default_factory=dict[str, str])
    """Optional checks that failed, with their reasons."""

    @property
    def ready(self) -> bool:
        return not self.failing

    def body(self) -> dict[str, object]:
        """The ``/readyz`` JSON body."""
        if self.failing:
            status = "not ready"
        elif self.degraded:
            status = "degraded"
        else:
            status = "ready"
        body: dict[str, object] = {"status": status}
        if self.failing:
            body["failing"] = self.failing
        if self.degraded:
            body["degraded"] = self.degraded
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
            if reason is not None:
                (report.failing if required else report.degraded)[name] = reason
        return report


def mounts_done(mounted: anyio.Event | None) -> Check:
    """A check: the initial mounts are done (``mounted`` is set; None: nothing to wait for)."""

    def check() -> str | None:
        if mounted is None or mounted.is_set():
            return None
        return "the initial mounts are under way"

    return check


def required_servers_up(registry: Registry) -> Check:
    """A check: every mounted server with ``required = true`` is up (see `UP_STATES`)."""

    def check() -> str | None:
        down = [row for row in registry.status() if row.required and row.state not in UP_STATES]
        if not down:
            return None
        return "; ".join(
            f"required server {row.server!r} is {row.state}"
            + (f": {row.error}" if row.error else "")
            for row in down
        )

    return check


def health_routes(readiness: Readiness) -> list[Route]:
    """The ``/healthz`` and ``/readyz`` routes (GET and HEAD)."""

    async def healthz(request: Request) -> Response:
        return _json(200, {"status": "alive"})

    async def readyz(request: Request) -> Response:
        report = readiness.report()
        return _json(200 if report.ready else 503, report.body())

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
