"""Change one member of a JSON (or JSONC) file and leave every other byte as it was.

A host's file is its user's: VS Code's and Zed's have comments and trailing commas, and
any of them has its own indentation and key order. Parsing it and writing it back would
reformat all of it (and drop its comments), so `set_member` and `remove_member` splice
the text instead: they find the span of the one member by parsing a copy with its
comments blanked (`strip_jsonc` keeps every other character at its offset), and replace,
insert or cut only that span. What is inserted follows the file's own indentation and its
trailing commas.

No library on PyPI did this when it was written: ``json-five`` round-trips JSON5 through
a model that must be built node by node to insert anything, and is imported as ``json5``
(another package's name); the others strip comments, or are alpha.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from mcpmount.configfile import load_json, strip_jsonc

__all__ = ["member", "remove_member", "set_member"]

_BLANKS = " \t\r\n"
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class _Member:
    key: str
    start: int
    """Where its key's opening quote is."""
    value: int
    """Where its value starts."""
    end: int
    """Where its value ends."""


@dataclass(frozen=True, slots=True)
class _Object:
    start: int
    """Where its ``{`` is."""
    end: int
    """Where its ``}`` is."""
    members: tuple[_Member, ...]


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _BLANKS:
        at += 1
    return at


def _object(plain: str, at: int) -> _Object | None:
    """Return the object whose ``{`` is at ``at`` of ``plain`` (comments blanked)."""
    if plain[at : at + 1] != "{":
        return None
    members: list[_Member] = []
    opening, at = at, _skip(plain, at + 1)
    while plain[at] != "}":
        key, after = _DECODER.raw_decode(plain, at)
        colon = _skip(plain, after)
        value = _skip(plain, colon + 1)
        _, end = _DECODER.raw_decode(plain, value)
        members.append(_Member(str(key), at, value, end))
        at = _skip(plain, end)
        if plain[at] == ",":
            at = _skip(plain, at + 1)
    return _Object(opening, at, tuple(members))


def _find(plain: str, path: Sequence[str]) -> tuple[list[_Object], _Member | None]:
    """Return the objects along ``path`` that exist (the top one first), and the member
    the whole path names, if there is one."""
    top = _object(plain, _skip(plain, 0))
    if top is None:
        raise ValueError("must hold a JSON object")
    found = [top]
    for depth, key in enumerate(path):
        hit = next((m for m in found[-1].members if m.key == key), None)
        if hit is None or depth == len(path) - 1:
            return found, hit
        inner = _object(plain, hit.value)
        if inner is None:
            raise ValueError(f"{'.'.join(path[: depth + 1])}: must be an object")
        found.append(inner)
    return found, None


def _comma_after(text: str, plain: str, at: int) -> int | None:
    """Where the comma after the value ending at ``at`` is (a trailing one too, which
    ``plain`` has blanked); None if none follows before the next member or the end."""
    while at < len(plain) and plain[at] in _BLANKS:
        if text[at] == ",":
            return at
        at += 1  # a blank, or a character of a comment
    return at if plain[at : at + 1] == "," else None


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _indent_of(text: str, at: int) -> str:
    """The blanks that start the line ``at`` is on."""
    start = _line_start(text, at)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _unit(text: str, plain: str) -> str:
    """The file's step of indentation: that of the first member on a line of its own."""
    top = _object(plain, _skip(plain, 0))
    objects = [top] if top else []
    while objects:
        outer = objects.pop(0)
        for m in outer.members:
            inner_indent, outer_indent = _indent_of(text, m.start), _indent_of(text, outer.start)
            on_own_line = text[_line_start(text, m.start) : m.start].strip() == ""
            if on_own_line and len(inner_indent) > len(outer_indent):
                return inner_indent[len(outer_indent) :]
            if (inner := _object(plain, m.value)) is not None:
                objects.append(inner)
    return "  "


def _render(value: object, indent: str, unit: str) -> str:
    lines = json.dumps(value, indent=unit, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def member(text: str, path: Sequence[str]) -> str | None:
    """Return the text of the value ``path`` names, as written; None if it is not there."""
    plain = strip_jsonc(text)
    load_json(plain)
    _, hit = _find(plain, path)
    return None if hit is None else text[hit.value : hit.end]


def set_member(text: str, path: Sequence[str], value: object) -> str:
    """Return ``text`` with the member ``path`` names set to ``value``: its value replaced
    where it is, else the member added after the last of its object (objects along the
    path that are missing are added with it). Nothing else changes.

    Raises:
        ValueError: If ``text`` is not JSON (with comments), or holds something other
            than an object along ``path``.
    """
    if not text.strip():
        nested: object = value
        for key in reversed(path):
            nested = {key: nested}
        return json.dumps(nested, indent=2, ensure_ascii=False) + "\n"
    plain = strip_jsonc(text)
    load_json(plain)  # refuse what is not JSON before splicing into it
    unit = _unit(text, plain)
    objects, hit = _find(plain, path)
    if hit is not None:
        indent = _indent_of(text, hit.start)
        return text[: hit.value] + _render(value, indent, unit) + text[hit.end :]
    rest = path[len(objects) - 1 :]
    nested = value
    for key in reversed(rest[1:]):
        nested = {key: nested}
    return _insert(text, plain, objects[-1], rest[0], nested, unit)


def _insert(text: str, plain: str, into: _Object, key: str, value: object, unit: str) -> str:
    """Add ``key: value`` as the last member of the object ``into``."""
    outer = _indent_of(text, into.start)
    if not into.members:
        indent = outer + unit
        entry = f"{json.dumps(key)}: {_render(value, indent, unit)}"
        if text[_line_start(text, into.end) : into.end].strip() == "":  # } on its own line
            at = _line_start(text, into.end)
            return text[:at] + indent + entry + "\n" + text[at:]
        return text[: into.end] + f"\n{indent}{entry}\n{outer}" + text[into.end :]
    last = into.members[-1]
    own_line = text[_line_start(text, last.start) : last.start].strip() == ""
    indent = _indent_of(text, last.start) if own_line else outer + unit
    entry = f"{json.dumps(key)}: {_render(value, indent, unit)}"
    comma = _comma_after(text, plain, last.end)
    trailing = comma is not None  # the last member's comma: a trailing one
    head = text[: last.end] + ("" if trailing else ",")
    newline = text.find("\n", last.end, into.end)
    if newline != -1 and plain[last.end : newline].strip() == "":
        # The last member ends its line (perhaps with a comment): the new one goes below.
        tail = text[last.end : newline + 1]
        return head + tail + indent + entry + ("," if trailing else "") + "\n" + text[newline + 1 :]
    gap = "\n" + indent if own_line else " "
    rest = last.end if comma is None else comma + 1
    return head + text[last.end : rest] + gap + entry + ("," if trailing else "") + text[rest:]


def remove_member(text: str, path: Sequence[str]) -> str:
    """Return ``text`` without the member ``path`` names (its line, when it has its own),
    and with the comma before it dropped when it was the last and the file has no
    trailing commas; ``text`` itself when there is no such member."""
    plain = strip_jsonc(text)
    load_json(plain)
    objects, hit = _find(plain, path)
    if hit is None:
        return text
    members = objects[-1].members
    index = next(i for i, m in enumerate(members) if m.start == hit.start)
    after = _comma_after(text, plain, hit.end)
    comma = after is not None
    cut_end = after + 1 if after is not None else hit.end
    start = hit.start
    line = _line_start(text, start)
    own_line = text[line:start].strip() == ""
    if own_line:
        start = line
        newline = text.find("\n", cut_end)
        if newline != -1 and plain[cut_end:newline].strip() == "":
            cut_end = newline + 1
    elif comma:  # on a line with others: the blank after its comma goes with it
        following = _skip(plain, cut_end)
        if "\n" not in text[cut_end:following]:
            cut_end = following
    if index == len(members) - 1 and not comma and index > 0:
        before = members[index - 1]
        previous_comma = _skip(plain, before.end)  # the comma between them, not trailing
        if not own_line:  # `, "name": value` goes, from that comma on
            return text[:previous_comma] + text[cut_end:]
        return text[:previous_comma] + text[previous_comma + 1 : start] + text[cut_end:]
    return text[:start] + text[cut_end:]
