"""What a code run may use (`CodeLimits`), what it gives back (`CodeRun`), whom it calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types

__all__ = ["CodeLimits", "CodeRun", "ToolCaller"]

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[mcp_types.CallToolResult]]
"""(public tool name, arguments) -> the tool's result, through the caller's normal path."""


@dataclass(frozen=True, slots=True)
class CodeLimits:
    """How much one run may take; each is a key of ``[registry.code_mode]`` of that name
    (``memory_mb`` for `memory_bytes`), which a refusal names so the user knows what to raise."""

    timeout: float = 30.0
    """Wall-clock seconds for the whole run, tool calls included."""
    cpu_seconds: int = 10
    """CPU seconds of the program (``RLIMIT_CPU``)."""
    memory_bytes: int = 512 << 20
    """Address space of the program (``RLIMIT_AS``): the interpreter itself takes ~30 MB."""
    output_bytes: int = 64 << 10
    """Printed output kept (stdout and stderr together); more is cut with a marker."""
    max_calls: int = 200
    """Tool calls one run may make; the next one is refused (``ToolError`` in the program)."""


@dataclass(frozen=True, slots=True)
class CodeRun:
    """The outcome of one run."""

    result: mcp_types.CallToolResult
    """The printed output; or ``isError`` with the traceback of the model's code only, or
    with why it was stopped (which limit, and the key that raises it)."""
    calls: int
    """Tool calls the program made (refused ones included)."""
    startup: float
    """Seconds from spawn until the sandboxed program was ready to run (and call)."""
