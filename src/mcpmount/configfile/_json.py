"""JSON that mcpmount reads back from files and stores it does not own: `load_json`.

A cache entry on disk or in a shared Redis, a message on a shared channel, a config file:
anyone who can write there can plant a document that Python's parser cannot survive.
``json.loads`` recurses once per nesting level, so 200,000 nested brackets raise
`RecursionError` (which no ``except ValueError`` catches), and a huge document takes
memory in proportion. `load_json` therefore measures the size and the nesting before
parsing, with a scan that does not recurse, and turns every way the data can fail into
one `ValueError`.

Hosts' files are JSON with comments (JSONC: VS Code's and Cursor's ``mcp.json``):
`strip_jsonc` blanks their ``//`` and ``/* */`` comments and trailing commas outside
strings, leaving every other character where it was, so a parse error still gives the line
and column of the file as written.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Callable
from typing import Final

__all__ = ["MAX_JSON_DEPTH", "json_depth", "load_json", "strip_jsonc"]

MAX_JSON_DEPTH: Final = 200
"""The deepest nesting `load_json` accepts by default: what the SDK's parser (pydantic's)
accepts in a message, so nothing a server sent is deeper."""

_ESCAPE: Final = re.compile(rb"\\.", re.DOTALL)
_STRING: Final = re.compile(rb'"[^"]*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")

_JSONC_TOKEN: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|,|[^\s"/,]+', re.DOTALL)
"""A string (on one line, as JSON's are), a comment, a comma, or a run of other characters
that are not blank; a ``"`` or ``/`` that starts none of them is left to the JSON parser."""
_CLOSING: Final = re.compile(r"(?:\s|//[^\n]*|/\*.*?\*/)*[\]}]", re.DOTALL)
"""What follows a trailing comma: blanks and comments, then the end of an array or object."""
_BLANK: Final = re.compile(r"[^\r\n]")
_NO_VALUE: Final = ("", "[", "{", ",", ":")
"""What a comma after no value follows: it is not a trailing comma, but the parser's error."""


def json_depth(data: bytes) -> int:
    """Return how deeply brackets nest in ``data`` outside its strings (an upper bound for
    a document that is not JSON), in linear time and without recursion."""
    # Escapes first, so that an escaped quote cannot end a string; then strings, whose
    # brackets are text. What is left of brackets counts 2 per opening one: the depth
    # after n brackets is their running sum minus n.
    outside = _STRING.sub(b"", _ESCAPE.sub(b"", data))
    steps = outside.translate(None, _NOT_BRACKETS).translate(_STEPS)
    return max(map(operator.sub, itertools.accumulate(steps), itertools.count(1)), default=0)


def load_json(
    data: bytes | str,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    object_pairs_hook: Callable[[list[tuple[str, object]]], object] | None = None,
) -> object:
    """Parse ``data`` as JSON, after checking its size and nesting.

    Args:
        data: The document: UTF-8 bytes, or text.
        max_bytes: The largest document accepted (in UTF-8 bytes); None for any size.
        max_depth: The deepest nesting of arrays and objects accepted.
        object_pairs_hook: Given to ``json.loads``.

    Raises:
        ValueError: The document is too large, nested too deeply, not UTF-8, or not JSON
            (a `json.JSONDecodeError` then, with its position).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise ValueError(f"it is larger than {max_bytes} bytes ({len(raw)})")
    if (depth := json_depth(raw)) > max_depth:
        raise ValueError(f"it nests {depth} levels deep, over {max_depth}")
    try:
        return json.loads(data, object_pairs_hook=object_pairs_hook)
    except RecursionError:  # a caller already deep in its stack: refused like the rest
        raise ValueError(f"it nests too deeply to parse here ({depth} levels)") from None


def strip_jsonc(text: str) -> str:
    """Return ``text`` (JSON with comments) as JSON: each comment, and each comma that ends
    an array or object after a value, becomes spaces (a comment's line breaks stay), so
    every other character keeps its line and column. Strings are left as they are
    (``"http://x"`` keeps its ``//``); what is not JSONC is left for the parser to refuse
    (an unclosed ``/*``, a comma with no value before it)."""
    pieces: list[str] = []
    at = 0
    last = ""  # the last character of JSON before here: a comma ends a value unless [{,:
    for token in _JSONC_TOKEN.finditer(text):
        value = token[0]
        trailing = value == "," and last not in _NO_VALUE and _CLOSING.match(text, token.end())
        if trailing or value.startswith(("//", "/*")):
            pieces += text[at : token.start()], _BLANK.sub(" ", value)
            at = token.end()
        else:
            last = value[-1]
    pieces.append(text[at:])
    return "".join(pieces)
