"""`warn_deprecated`: a `DeprecationWarning` told at the user's line, so Python shows it.

Python's default filters show a `DeprecationWarning` only when it is attributed to
``__main__``. A fixed ``stacklevel`` cannot find the user's line when the old form is
read inside pydantic's validation, a dataclass's ``__init__`` or a coroutine that anyio
runs, so the warning is attributed to the first frame outside these packages instead.
(Python 3.12's ``skip_file_prefixes`` does this; the floor is 3.11.)
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType

__all__ = ["warn_deprecated"]

_INSIDE = frozenset({"mcpmount", "pydantic", "anyio", "asyncio"})
"""Packages whose frames are never the user's line."""


def warn_deprecated(message: str) -> None:
    """Warn ``message`` as a `DeprecationWarning` at the first frame outside mcpmount,
    pydantic, anyio and asyncio: the line of the user's code that used the old form."""
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    level = 2
    while frame.f_back is not None and _package(frame) in _INSIDE:
        frame = frame.f_back
        level += 1
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _package(frame: FrameType) -> str:
    """The top-level package of the code running in ``frame``."""
    name = frame.f_globals.get("__name__")
    return name.partition(".")[0] if isinstance(name, str) else ""
