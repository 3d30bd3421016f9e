"""Problem lines: pydantic's errors in our words, one line each, naming the key.

A line never contains a value, because values may be secrets: only keys, bounds and the
names of what is expected.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TypeAlias

from pydantic_core import ErrorDetails

Loc: TypeAlias = tuple[str | int, ...]
"""Where a problem is: keys and list indexes from the top of the file."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def format_loc(loc: Loc) -> str:
    """Return ``loc`` as a TOML-style dotted key: ``servers.fs.args[2]``, ``headers."X Y"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":  # pydantic's marker for an error in a dict key
            key = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            out += f".{key}" if out else key
    return out


def line(loc: Loc, message: str) -> str:
    """Return one problem line: the dotted key, then the message."""
    return f"{format_loc(loc)}: {message}" if loc else message


def unknown_key(key: str, candidates: Iterable[str]) -> str:
    """Return the message for an unknown ``key``, suggesting the closest of ``candidates``."""
    match = difflib.get_close_matches(key, list(candidates), n=1)
    return f"unknown key; did you mean {match[0]!r}?" if match else "unknown key"


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_MESSAGES: Mapping[str, Callable[[Mapping[str, object]], str]] = {
    "missing": lambda _: "is required",
    "string_type": lambda _: "must be a string",
    "list_type": lambda _: "must be a list",
    "bool_type": lambda _: "must be true or false",
    "bool_parsing": lambda _: "must be true or false",
    "int_type": lambda _: "must be an integer",
    "int_parsing": lambda _: "must be an integer",
    "int_from_float": lambda _: "must be an integer",
    "float_type": lambda _: "must be a number",
    "float_parsing": lambda _: "must be a number",
    "finite_number": lambda _: "must be a finite number",
    "greater_than": lambda ctx: f"must be greater than {_number(ctx['gt'])}",
    "greater_than_equal": lambda ctx: f"must be at least {_number(ctx['ge'])}",
    "less_than": lambda ctx: f"must be less than {_number(ctx['lt'])}",
    "less_than_equal": lambda ctx: f"must be at most {_number(ctx['le'])}",
    "literal_error": lambda ctx: f"must be {ctx['expected']}",
}


def _message(error: ErrorDetails, table: str) -> str:
    """Return the problem in ``error`` in our words; pydantic's ``msg`` carries no input."""
    kind, loc = error["type"], error["loc"]
    if kind == "dict_type":
        return f"must be {table}"
    if kind == "list_type" and loc in (("args",), ("headers_command",)):
        return "must be a list of strings (a single string is never split into arguments)"
    if (describe := _MESSAGES.get(kind)) is not None:
        return describe(error.get("ctx", {}))
    msg = error["msg"]
    return "must" + msg.removeprefix("Input should") if msg.startswith("Input should") else msg


def problem_lines(
    errors: Iterable[ErrorDetails],
    prefix: Loc,
    *,
    table: str,
    unknown: Callable[[str], str],
    skip: Collection[Loc] = (),
    rename: Callable[[str], Loc | None] = lambda _: None,
) -> list[str]:
    """Return one line per error, each naming its key under ``prefix``.

    Args:
        errors: From ``ValidationError.errors(include_input=False)``.
        prefix: Where the validated table is in the file.
        table: What a mapping is called in the file ("a table", "an object").
        unknown: Words an unknown top-level key.
        skip: Keys whose errors are dropped, because they were reported already.
        rename: May give another full location for a top-level key.
    """
    lines: list[str] = []
    for error in errors:
        loc = error["loc"]
        if any(loc[: len(s)] == s for s in skip):
            continue
        head = loc[0] if loc else None
        where = (*prefix, *loc)
        if isinstance(head, str) and (renamed := rename(head)) is not None:
            where = (*renamed, *loc[1:])
        if error["type"] == "extra_forbidden" and len(loc) == 1 and isinstance(head, str):
            message = unknown(head)
        else:
            message = _message(error, table)
        lines.append(line(where, message))
    return lines
