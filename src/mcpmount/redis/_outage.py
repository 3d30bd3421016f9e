"""`Outage`: whether one Redis answers, and when it is asked again after it did not.

Redis is an optimization and a meeting point, never a dependency: whatever uses it goes on
without it (`Purpose.meanwhile` says how). So a failure is remembered, said once (one
warning naming the first use that met it), and Redis is left alone for a back-off that
starts at `FIRST_RETRY` seconds and doubles with each retry that fails, up to
`LAST_RETRY`; the first answer ends the outage (one info line). Requests that failed
together with the one that told are not retries: they neither warn nor lengthen the wait.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Final

__all__ = ["FIRST_RETRY", "LAST_RETRY", "Outage", "Purpose"]

logger = logging.getLogger("mcpmount.redis")

FIRST_RETRY: Final = 1.0
"""Seconds Redis is left alone after it stopped answering."""

LAST_RETRY: Final = 30.0
"""The longest wait between two attempts while it does not answer."""


@dataclass(frozen=True, slots=True)
class Purpose:
    """What a store uses Redis for, in the words of the warning it gives when it cannot."""

    what: str
    """The store, as the warning names it: ``"the shared vector store"``."""
    meanwhile: str
    """What happens without Redis: ``"vectors are computed here"``."""


class Outage:
    """The answering state of the Redis at ``shown`` (a URL fit for messages)."""

    __slots__ = ("_backoff", "_problem", "_retry_at", "shown")

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self._problem: str | None = None
        self._backoff = 0.0
        self._retry_at = 0.0

    @property
    def problem(self) -> str | None:
        """None while Redis answers (or was not asked yet); else why it does not
        (``"redis unreachable: ..."``)."""
        return self._problem

    def leave_alone(self) -> bool:
        """Whether a request now would only wait for a Redis that is down: skip it."""
        return self._problem is not None and time.monotonic() < self._retry_at

    def failed(self, purpose: Purpose, why: str, *, started: float) -> None:
        """Count a failure of a request ``started`` at that `time.monotonic`."""
        now = time.monotonic()
        problem = f"redis unreachable: {why}"
        if self._problem is None:
            self._backoff = FIRST_RETRY
            logger.warning(
                "%s at %s cannot be used: %s; %s, and it is tried again in %g s",
                purpose.what,
                self.shown,
                problem,
                purpose.meanwhile,
                self._backoff,
            )
        elif started >= self._retry_at:  # a retry: wait longer before the next
            self._backoff = min(self._backoff * 2, LAST_RETRY)
        else:  # failed together with the request that told
            return
        self._problem = problem
        self._retry_at = now + self._backoff

    def answered(self) -> None:
        """Redis answered: the outage, if any, is over."""
        if self._problem is not None:
            self._problem = None
            logger.info("the Redis at %s answers again", self.shown)
