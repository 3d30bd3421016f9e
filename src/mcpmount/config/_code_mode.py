"""Code mode: the ``[registry.code_mode]`` table (the ``run_code`` meta-tool and its limits).

::

    [registry.code_mode]
    enabled = true        # offer run_code beside tool_search
    timeout = 30          # wall-clock seconds of one run, its tool calls included
    cpu_seconds = 10      # CPU seconds of the program
    memory_mb = 512       # address space of the program
    output_bytes = 65536  # printed output kept; more is cut with a marker
    max_calls = 200       # tool calls one run may make

The keys are data only: `mcpmount.codemode` turns them into the runner's limits.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcpmount.config._fields import STRICT_DATA

__all__ = ["CodeModeSettings"]


class CodeModeSettings(BaseModel):
    """Whether models are offered ``run_code``, and the limits of one run."""

    model_config = STRICT_DATA

    enabled: bool = False
    """Offer the ``run_code`` meta-tool (where a sandbox can run it): a model sends a short
    Python program that calls the mounted tools as functions, in a fresh sandbox, and
    reads what it prints. Each call it makes goes the way a direct call goes (the secret
    guard, approval, and behind ``serve`` the caller's visibility, limits and call log)."""

    timeout: float = Field(default=30.0, gt=0, le=3600, allow_inf_nan=False)
    """Wall-clock seconds one run may take, its tool calls included."""

    cpu_seconds: int = Field(default=10, ge=1, le=3600)
    """CPU seconds the program may use."""

    memory_mb: int = Field(default=512, ge=64, le=65536)
    """Megabytes of address space the program may map."""

    output_bytes: int = Field(default=65536, ge=1024, le=16_777_216)
    """Bytes of printed output kept; more is cut, with a line saying so."""

    max_calls: int = Field(default=200, ge=1, le=100_000)
    """Tool calls one run may make; the next one fails in the program."""
