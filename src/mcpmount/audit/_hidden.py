"""Hidden characters in what a server tells the model: found, then stripped or refused.

A model reads characters a person never sees: Unicode tag characters (U+E0000-U+E007F)
spell out whole ASCII sentences invisibly, bidi controls make text read otherwise than it
is stored, zero-width characters split or smuggle words, and terminal escapes (ESC, C1,
other C0 controls) hide text from whoever reviews a listing in a terminal. A server's
definitions are untrusted, so every listing passes a `Cleaner` (``upstream`` runs one
over each server's tools, prompts, resources and templates: at mount, after a list
change, and for cached lists): with ``hidden_text = "strip"`` (the default) such
characters are removed and the server is named in one warning; with ``"refuse"`` the
server is refused, all or nothing. Newlines and tabs are text, and so is a carriage
return before a newline.

What is cleaned is what the model reads as prose or as the shape of a call: a tool's
title, description, annotation title and every string (keys too) of its input and output
schemas; a prompt's title, description and each argument's name, title and description;
a resource's or template's name, title and description. Tool and prompt names are held
to MCP's name grammar instead (ASCII only), and URIs are left as they are, since they
name what a read is routed to; the audit reports hidden characters left in them.
Stripping a schema key or value may make the server refuse calls the model builds from
it: that server is hostile or broken, and the warning says which tool it was.

Variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF) are text where Unicode uses them,
and hidden where they smuggle: one byte each, a run of them after a visible character
carries a whole message ("emoji smuggling"). So a selector is hidden when it is one of a
run of two or more, when it follows no character at all (the start of a text, or
whitespace), or when it is from the supplementary range (U+E0100 and up) and follows
anything but a CJK ideograph (an ideographic variation sequence, as in Japanese names).
A single U+FE0F (emoji presentation, ``\u2764\ufe0f``) or U+FE0E after a character is
text, as is a single U+FE00-U+FE0D (math and CJK compatibility variants). Likewise a
zero-width joiner between two pictographs (``\U0001f468\u200d\U0001f469``, a family
emoji) is text; any other is hidden. At most one selector per visible character is let
through, a few bits: no sentence fits.

Reports name code points (``3 tag characters (U+E0041 U+E0042 U+E0043)``), never the
hidden text itself. `ResultCleaner` (``_results``) applies the same rules to what a
server answers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar, cast

import mcp_types

from mcpmount.audit._findings import Severity
from mcpmount.errors import ToolListError

__all__ = ["Cleaner", "HiddenText", "KeysCollide", "clean_json", "hidden_in"]

logger = logging.getLogger(__name__)

_CATEGORIES: tuple[tuple[str, Severity, str], ...] = (
    ("tag character", Severity.HIGH, "\U000e0000-\U000e007f"),
    ("bidi control", Severity.HIGH, "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"),
    (
        "control character",  # ESC and the rest of C0 but newline and tab, DEL, C1
        Severity.HIGH,
        "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff",  # and lone surrogates
    ),
    (
        "invisible character",  # zero-width space, joiners, word joiner, BOM, fillers
        Severity.MEDIUM,
        "\u115f\u1160\u180e\u200b\u200c\u2060-\u2065\u206a-\u206f\u3164\ufeff\uffa0\u200d",
    ),
    ("variation selector", Severity.HIGH, "\ufe00-\ufe0f\U000e0100-\U000e01ef"),
    (
        "format character",  # soft hyphen, line separators and the rest of Cf
        Severity.LOW,
        "\u00ad\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u2028\u2029\ufff9-\ufffb"
        "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a",
    ),
)
"""Each kind of hidden character: its name, how much it matters, its code points."""

_SELECTOR = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_JOINER = "\u200d"
_PICTOGRAPH = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2\u25aa-\u27bf"
    "\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001faff"
)
"""Characters an emoji sequence joins (``Extended_Pictographic``, skin tones, roughly)."""
_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
_ALL = "".join(chars for _, _, chars in _CATEGORIES)

_MAYBE = re.compile(f"[{_ALL}\r]")
"""Any character that may be hidden: one search tells a plain text (most) apart."""
_ASCII_MAYBE = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])
"""The ASCII characters of `_MAYBE`: an ASCII text is checked ten times faster by bytes."""

_HIDDEN = re.compile(
    f"[{_ALL.replace(_SELECTOR, '').replace(_JOINER, '')}]"
    "|\r(?!\n)"  # a carriage return is hidden unless a newline follows it
    f"|[{_SELECTOR}]{{2,}}"  # a run of selectors: a payload
    f"|(?<!\\S)[{_SELECTOR}]"  # a selector with nothing before it to select
    f"|(?<![{_IDEOGRAPH}])[\U000e0100-\U000e01ef]"  # a supplementary one but on an ideograph
    f"|(?<![{_PICTOGRAPH}\ufe0f]){_JOINER}|{_JOINER}(?![{_PICTOGRAPH}])"  # joining no emoji
)
"""Any hidden character, or run of them (see the module docstring)."""

_CATEGORY_OF = [
    (name, severity, re.compile(f"[{chars}\r]" if name == "control character" else f"[{chars}]"))
    for name, severity, chars in _CATEGORIES
]
_SHOWN_PER_KIND = 4
"""Code points a summary lists of each kind before it writes ``...``."""


def _may_hide(text: str) -> bool:
    """Whether ``text`` holds a character that may be hidden: the cheap first look."""
    if text.isascii():
        data = text.encode()
        return len(data.translate(None, _ASCII_MAYBE)) != len(data)
    return _MAYBE.search(text) is not None


def hidden_in(text: str) -> str:
    """Return the hidden characters of ``text``, in order ("" if it holds none)."""
    return "".join(_HIDDEN.findall(text)) if _may_hide(text) else ""


@dataclass(frozen=True, slots=True)
class HiddenText:
    """The hidden characters one definition of a server held."""

    kind: str
    """``"tool"``, ``"prompt"``, ``"resource"`` or ``"resource template"``."""
    name: str
    """Its raw name, or its URI (template)."""
    chars: str
    """Every hidden character found in it, in order."""

    def severity(self) -> Severity:
        """The severity of its worst kind of character."""
        return max(severity for _, severity, _ in self._kinds())

    def summary(self) -> str:
        """Say what was found by kind and code point, never as text: ``3 tag characters
        (U+E0041 U+E0042 U+E0043), 1 bidi control (U+202E)``."""
        parts: list[str] = []
        for name, _, chars in self._kinds():
            distinct = list(dict.fromkeys(chars))
            codes = " ".join(f"U+{ord(c):04X}" for c in distinct[:_SHOWN_PER_KIND])
            more = " ..." if len(distinct) > _SHOWN_PER_KIND else ""
            plural = "s" if len(chars) != 1 else ""
            parts.append(f"{len(chars)} {name}{plural} ({codes}{more})")
        return ", ".join(parts)

    def _kinds(self) -> list[tuple[str, Severity, str]]:
        """Each kind of character present: its name, severity and characters."""
        kinds: list[tuple[str, Severity, str]] = []
        for name, severity, pattern in _CATEGORY_OF:
            if chars := "".join(c for c in self.chars if pattern.fullmatch(c)):
                kinds.append((name, severity, chars))
        return kinds


class KeysCollide(Exception):
    """Stripping made two keys of one schema object the same."""


def clean_json(value: object, chars: list[str]) -> object:
    """``value`` (JSON) with hidden characters removed from every string, keys too;
    ``value`` itself when it held none. Each character found is added to ``chars``."""
    if isinstance(value, str):
        if not _may_hide(value):
            return value
        found = _HIDDEN.findall(value)
        if not found:
            return value
        chars += found
        return _HIDDEN.sub("", value)
    if isinstance(value, dict):
        before = len(chars)
        mapping = cast("dict[object, object]", value)
        items = [(clean_json(k, chars), clean_json(v, chars)) for k, v in mapping.items()]
        if len(chars) == before:
            return mapping
        cleaned = dict(items)
        if len(cleaned) != len(items):
            raise KeysCollide
        return cleaned
    if isinstance(value, list):
        before = len(chars)
        listed = cast("list[object]", value)
        cleaned_items = [clean_json(item, chars) for item in listed]
        return listed if len(chars) == before else cleaned_items
    return value


_Model = TypeVar(
    "_Model", mcp_types.Tool, mcp_types.Prompt, mcp_types.Resource, mcp_types.ResourceTemplate
)


class Cleaner:
    """Finds hidden characters in one listing of a server, and strips them or refuses it.

    One cleaner sees all of a listing (tools, prompts, resources, templates), so that
    `warn` names everything it stripped in one warning.

    Args:
        server: The server's namespace, for the error and the warning.
        policy: ``"strip"`` removes hidden characters; ``"refuse"`` refuses the server
            at the first definition that holds any (`ToolListError`).
    """

    def __init__(self, server: str, policy: Literal["refuse", "strip"] = "strip") -> None:
        self.server = server
        self.policy = policy
        self.found: list[HiddenText] = []
        """What each definition held, in listing order (under ``"strip"``: removed)."""

    def __repr__(self) -> str:
        return f"<Cleaner {self.server!r} {self.policy} found={len(self.found)}>"

    def tool(self, tool: mcp_types.Tool) -> mcp_types.Tool:
        """Return ``tool`` without hidden characters (see the module docstring)."""
        chars: list[str] = []
        update = self._texts(tool, ("title", "description"), chars)
        for key in ("input_schema", "output_schema"):
            schema = getattr(tool, key)
            try:
                cleaned = clean_json(schema, chars)
            except KeysCollide:
                raise ToolListError(
                    self.server,
                    "two keys of its schema differ only in hidden characters",
                    tool=tool.name,
                ) from None
            if cleaned is not schema:
                update[key] = cleaned
        hints = tool.annotations
        if hints is not None and (titled := self._texts(hints, ("title",), chars)):
            update["annotations"] = hints.model_copy(update=titled)
        return self._finish(tool, "tool", tool.name, chars, update)

    def prompt(self, prompt: mcp_types.Prompt) -> mcp_types.Prompt:
        """Return ``prompt`` without hidden characters, its arguments' too."""
        chars: list[str] = []
        update = self._texts(prompt, ("title", "description"), chars)
        if prompt.arguments:
            before = len(chars)
            arguments = [
                argument.model_copy(update=fields)
                if (fields := self._texts(argument, ("name", "title", "description"), chars))
                else argument
                for argument in prompt.arguments
            ]
            if len(chars) > before:
                update["arguments"] = arguments
        return self._finish(prompt, "prompt", prompt.name, chars, update)

    def resource(self, resource: mcp_types.Resource) -> mcp_types.Resource:
        """Return ``resource`` with no hidden character in its name, title or description."""
        chars: list[str] = []
        update = self._texts(resource, ("name", "title", "description"), chars)
        return self._finish(resource, "resource", resource.uri, chars, update)

    def template(self, template: mcp_types.ResourceTemplate) -> mcp_types.ResourceTemplate:
        """Return ``template`` with no hidden character in its name, title or description."""
        chars: list[str] = []
        update = self._texts(template, ("name", "title", "description"), chars)
        uri = template.uri_template
        return self._finish(template, "resource template", uri, chars, update)

    def warn(self) -> None:
        """Log one warning naming every definition that held hidden characters, if any."""
        if not self.found:
            return
        what = "; ".join(f"{h.kind} {h.name!r}: {h.summary()}" for h in self.found)
        logger.warning(
            "server %r: hidden characters stripped from what the model is shown: %s (set "
            'hidden_text = "refuse" to refuse such a server)',
            self.server,
            what,
        )

    def _texts(self, model: object, keys: Iterable[str], chars: list[str]) -> dict[str, object]:
        """The cleaned values of ``model``'s text fields ``keys`` that held hidden characters."""
        update: dict[str, object] = {}
        for key in keys:
            value = getattr(model, key)
            if isinstance(value, str) and (cleaned := clean_json(value, chars)) is not value:
                update[key] = cleaned
        return update

    def _finish(
        self, model: _Model, kind: str, name: str, chars: list[str], update: dict[str, object]
    ) -> _Model:
        if not chars:
            return model
        found = HiddenText(kind, name, "".join(chars))
        if self.policy == "refuse":
            raise ToolListError(
                self.server,
                f"its text holds hidden characters: {found.summary()}; set "
                'hidden_text = "strip" to mount it with them removed',
                tool=name,
                kind=kind,
            )
        self.found.append(found)
        return model.model_copy(update=update)
