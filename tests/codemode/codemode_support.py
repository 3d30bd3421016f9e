"""What the code mode tests share: limits, a run with a stub caller, the same program outside."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types

from mcpmount.codemode import CodeLimits, CodeRun, run_code
from support import text_of

LIMITS = CodeLimits(timeout=30, cpu_seconds=10, memory_bytes=256 << 20, output_bytes=4096)
"""Generous for a loaded machine; each test narrows the limit it tests."""


async def no_calls(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    """A caller for programs that must not call anything."""
    raise AssertionError(f"the program called {name}({arguments})")


async def run(
    source: str,
    *,
    tools: Sequence[mcp_types.Tool] = (),
    limits: CodeLimits = LIMITS,
) -> tuple[CodeRun, str]:
    """Run ``source`` sandboxed with no tools to call; the run and its text."""
    done = await run_code(source, tools, no_calls, limits=limits)
    return done, text_of(done.result)


def outside(
    source: str, env: Mapping[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """Run ``source`` with a plain ``python -I -S``, no sandbox: what it would do unguarded.

    Raises:
        subprocess.TimeoutExpired: If it still runs after ``timeout`` seconds (it is killed).
    """
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", source],
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else None,
        timeout=timeout,
        check=False,
    )
