"""One call log record: what a request named, and how it ended, never what it carried.

A record is a flat JSON object with every key always present (``null`` when it does not
apply), so that ``jq`` and `mcpmount log` filters need no special cases:

==============  ==================================================================
``time``        when the request arrived, ISO 8601 UTC to the millisecond
``principal``   the token's identity (``token:NAME``, ``FILE:LINE``, a JWT's
                ``client_id/sub``); null without a token. Never the token.
``method``      the JSON-RPC method (``tools/call``, ``resources/read``, ...)
``name``        the tool's or prompt's public name, or the resource URI, the request
                named (``call_tool``'s inner tool); null for lists and the like
``server``      the namespace that name belongs to; null if none does
``outcome``     one of `OUTCOMES`
``code``        the JSON-RPC error code of an answer that was an error (``error``,
                ``invalid``, ``unknown``, ``denied``...); null otherwise
``duration_ms`` from the request's arrival to its answer, in milliseconds
``bytes_in``    the size of the request's params, as JSON
``bytes_out``   the size of the result (or the error), as JSON
``args``        a keyed digest (BLAKE2b, 128 bits) of the arguments; equal arguments
                have equal digests under one key, and the values cannot be read back
==============  ==================================================================

The digest's key is `DigestKey`'s: random for each start unless the config gives one, and
never written anywhere.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import SecretStr

__all__ = ["FIELDS", "OUTCOMES", "DigestKey", "Outcome", "Record", "line_of", "record_of"]

Record = dict[str, Any]
"""One record: `FIELDS` to JSON values."""

Outcome = Literal[
    "ok",
    "tool_error",
    "input_required",
    "unknown",
    "denied",
    "rate_limited",
    "invalid",
    "error",
    "cancelled",
]

OUTCOMES: Final[tuple[Outcome, ...]] = (
    "ok",  # answered
    "tool_error",  # a tool's result with isError: the tool failed, or the call timed out
    "input_required",  # a 2026-era round: the client is asked something, and calls again
    "unknown",  # the name is not mounted
    "denied",  # the name exists but the principal may not see it (answered as unknown)
    "rate_limited",  # past a rate limit or a concurrency cap ([serve.limits])
    "invalid",  # the request could not be read (malformed params)
    "error",  # any other JSON-RPC error (an upstream's, say)
    "cancelled",  # the client cancelled, or left, before the answer
)
"""Every outcome a record can have."""

FIELDS: Final = (
    "time",
    "principal",
    "method",
    "name",
    "server",
    "outcome",
    "code",
    "duration_ms",
    "bytes_in",
    "bytes_out",
    "args",
)
"""The keys of every record, in the order they are written."""


class DigestKey:
    """The key of the arguments' digest: ``secret`` (the config's ``call_log_key``),
    stretched to BLAKE2b's key size, or random bytes that live as long as this object."""

    def __init__(self, secret: SecretStr | None = None) -> None:
        if secret is None:
            self._key = secrets.token_bytes(32)
        else:
            given = secret.get_secret_value().encode()
            self._key = hashlib.blake2b(given, digest_size=32).digest()

    def digest(self, arguments: object) -> str:
        """The hex digest of ``arguments`` (their canonical JSON: sorted keys, no spaces)."""
        text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.blake2b(text.encode(), key=self._key, digest_size=16).hexdigest()

    def __repr__(self) -> str:
        return "DigestKey(***)"


def record_of(
    *,
    start: float,
    principal: str,
    method: str,
    name: str | None,
    server: str | None,
    outcome: Outcome,
    code: int | None,
    duration: float,
    bytes_in: int,
    bytes_out: int,
    args: str | None,
) -> Record:
    """One record of a request that arrived at ``start`` (`time.time`)."""
    return {
        "time": datetime.fromtimestamp(start, UTC).isoformat(timespec="milliseconds")[:-6] + "Z",
        "principal": principal or None,
        "method": method,
        "name": name,
        "server": server,
        "outcome": outcome,
        "code": code,
        "duration_ms": round(duration * 1000, 3),
        "bytes_in": bytes_in,
        "bytes_out": bytes_out,
        "args": args,
    }


def line_of(record: Record) -> str:
    """``record`` as its JSON line (ASCII only: a name's control characters are escaped,
    so printing the file cannot drive a terminal)."""
    return json.dumps(record, separators=(",", ":")) + "\n"
