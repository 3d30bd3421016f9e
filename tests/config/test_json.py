"""`load_json`: JSON read back from files and stores, its size and nesting bounded before it
is parsed."""

from __future__ import annotations

import json

import pytest
from config_support import Write, problems_of

from mcpmount.config import load_json
from mcpmount.configfile import json_depth


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth(b"") == json_depth(b"1") == json_depth(b'"[[["') == 0
    assert json_depth(b'{"a": [1, {"b": "]]]\\"[[["}]}') == 3
    assert json_depth(b'["\\\\", [[]]]') == 3  # an escaped backslash does not escape the quote
    assert json_depth(b"[" * 200_000 + b"]" * 200_000) == 200_000


def test_a_document_nested_past_the_bound_is_a_value_error_not_a_recursion_error() -> None:
    """200,000 brackets would make ``json.loads`` raise RecursionError."""
    deep = "[" * 200_000 + "]" * 200_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(ValueError, match="nests 200000 levels deep, over 200"):
        load_json(deep)
    assert load_json("[" * 200 + "]" * 200, max_depth=200) is not None


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"a": 1', "Expecting ','"),
        (b'"\xff"', "can't decode"),
        (b'{"a": "' + b"x" * 100 + b'"}', "larger than 64 bytes"),
    ],
)
def test_every_way_a_document_fails_is_one_value_error(data: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        load_json(data, max_bytes=64)


def test_a_document_within_the_bounds_parses_as_json_loads_does() -> None:
    body = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "n": 1.5}
    assert load_json(json.dumps(body).encode()) == body
    assert load_json(json.dumps(body)) == body


def test_a_deep_json_config_is_a_config_problem(write: Write) -> None:
    """``mcpmount check`` of such a file says what is wrong instead of a traceback."""
    path = write("servers.json", '{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert problems_of(path) == ("invalid JSON: it nests 100001 levels deep, over 200",)
