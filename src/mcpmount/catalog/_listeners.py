"""Listeners: callbacks told of each change, synchronously, one failure never stopping the rest."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Listeners"]

logger = logging.getLogger(__name__)

_Value = TypeVar("_Value")


class Listeners(Generic[_Value]):
    """The callbacks told of one kind of change; ``what`` names it in a failure's log line."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._listeners: list[Callable[[_Value], None]] = []

    def add(self, listener: Callable[[_Value], None]) -> Callable[[], None]:
        """Call ``listener`` with every value told from now on; returns the unsubscriber."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def tell(self, value: _Value, about: str) -> None:
        """Call every listener with ``value``; one that raises is logged, with ``about``."""
        for listener in list(self._listeners):
            try:
                listener(value)
            except Exception:
                logger.exception("a %s listener failed on %s", self._what, about)
