"""The command line's exit codes."""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK: Final = 0
"""Every server mounted, every call answered."""
EXIT_FAILED: Final = 1
"""A server or a call failed."""
EXIT_USAGE: Final = 2
"""Bad config or usage: nothing was started."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C (128 + SIGINT), as a shell reports it."""
