"""Untrusted data that failed to parse, told without quoting it: where, and the rule broken."""

from __future__ import annotations

import pydantic

__all__ = [
    "describe_invalid",
]


def describe_invalid(exc: ValueError) -> str:
    """Say what is wrong with untrusted data that failed to parse, without quoting it.

    The input may hold a secret (a server can echo its environment), so only the location
    and the rule broken are told, never the value.
    """
    if not isinstance(exc, pydantic.ValidationError):
        return type(exc).__name__
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = exc.error_count() - 1
    problem = f"{where}: {first['msg']}" if where else first["msg"]
    return problem + (f" (and {more} more problems)" if more else "")
