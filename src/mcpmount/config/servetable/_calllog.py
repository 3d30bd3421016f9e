"""The ``[serve]`` keys of the call log: where ``serve`` writes one record per request.

::

    [serve]
    call_log = "calls.jsonl"        # or "stdout", or "otel"; absent: no call log
    call_log_max_bytes = 10485760   # rotate the file past this size (0: never)
    call_log_backups = 5            # rotated files kept: calls.jsonl.1 ... calls.jsonl.5
    call_log_key = "${CALL_LOG_KEY}"  # the arguments' digest key; default: new each start

They are `ServeSettings`' own (a base of it), kept apart so the call log's keys read
together.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcpmount.config._fields import STRICT_DATA, EnvValue, Text

__all__ = ["CALL_LOG_SINKS", "CallLogSettings"]

CALL_LOG_SINKS = ("stdout", "otel")
"""The ``call_log`` values that name no file: serve's stdout (HTTP only) and OpenTelemetry
log records."""


class CallLogSettings(BaseModel):
    """Where ``serve`` writes its call log, how the file rotates, and the digest's key."""

    model_config = STRICT_DATA

    call_log: Text | None = None
    """Write one record per request ``serve`` answers (JSON lines): to this file (relative
    to the config; rotated by size), to ``"stdout"`` (HTTP ``serve`` only: under stdio,
    stdout is the MCP stream), or as OpenTelemetry log records (``"otel"``: through the
    logger provider the process installed). None: no call log."""

    call_log_max_bytes: int = Field(default=10 * 1024 * 1024, ge=0)
    """Rotate the call log file once it would pass this many bytes (0: never rotate)."""

    call_log_backups: int = Field(default=5, ge=0, le=1000)
    """How many rotated files to keep (``calls.jsonl.1`` is the newest); 0: the file is
    truncated when it rotates."""

    call_log_key: EnvValue | None = None
    """The key of the arguments' digest (keyed BLAKE2b), so that equal arguments have equal
    digests across restarts and replicas; a secret, never written. None: a random key per
    start (digests then correlate within one run only)."""
