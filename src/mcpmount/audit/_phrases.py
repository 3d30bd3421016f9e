"""Instruction-like phrasing aimed at the model: a curated, deterministic list.

A tool's description is meant to say what the tool does. A poisoned one talks to the
model instead: it tells it to ignore its instructions, to keep something from the user,
to read a key file first and pass it along, or it wraps its orders in ``<IMPORTANT>``
tags (the shapes of the published tool-poisoning attacks). Each phrase here is one of
those shapes, matched case-insensitively over the text with its whitespace collapsed; none
fires on ordinary guidance ("you should call this first", "tell the user the result").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from mcpmount.audit._findings import Severity

__all__ = ["Phrase", "instructions_in"]

_QUOTED_CHARS = 60
"""The most characters of a match a finding quotes."""

_USER = r"(?:the |your )?(?:user|human|person)s?"
_NEGATION = r"(?:do not|don't|dont|never|must not|should not|shouldn't|without)"

_PHRASES: tuple[tuple[str, Severity, str], ...] = (
    (
        "tells the model to ignore its instructions",
        Severity.HIGH,
        r"\b(?:ignore|disregard|forget|override)\b (?:all |any )?(?:of )?(?:the |your |my )?"
        r"(?:previous|prior|above|earlier|preceding|original|other|system|existing) "
        r"(?:instructions|prompts?|rules|directions|guidelines|messages)",
    ),
    (
        "tells the model to keep something from the user",
        Severity.HIGH,
        rf"\b{_NEGATION} (?:tell|telling|inform|informing|notify|notifying|alert|alerting"
        rf"|warn|warning|let|letting|show|showing) {_USER}\b",
    ),
    (
        "tells the model not to mention something",
        Severity.HIGH,
        rf"\b{_NEGATION} (?:mention|mentioning|reveal|revealing|disclose|disclosing)\b",
    ),
    (
        "acts behind the user's back",
        Severity.HIGH,
        r"\b(?:secretly|covertly|stealthily)\b|\b(?:silently|quietly) (?:send|upload|forward"
        r"|read|copy|include|add|pass|email|post|call|run|execute|record|store|append)"
        r"|\bwithout (?:the |your )?(?:user'?s? |human'?s? )?(?:knowing|knowledge|noticing"
        r"|consent|permission)\b",
    ),
    (
        "wraps orders in a tag the model may obey",
        Severity.HIGH,
        r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|override)\s*>"
        r"|\[\s*(?:system|important|hidden|instructions?)\s*\]",
    ),
    (
        "names a credential file",
        Severity.HIGH,
        r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\.netrc\b"
        r"|\.git-credentials|\.npmrc\b|\.pypirc\b|\bmcp\.json\b|claude_desktop_config"
        r"|/etc/(?:passwd|shadow)\b|\.docker/config\.json|\.kube/config",
    ),
    (
        "asks to read or send something before the tool is used",
        Severity.HIGH,
        r"\bbefore (?:using|calling|running|invoking) (?:this|the|any) tools?,? (?:you )?"
        r"(?:must |should |always |first )*(?:read|cat|open|send|upload|include|pass|attach)\b",
    ),
    (
        "asks to pass a file's contents along",
        Severity.HIGH,
        r"\bpass (?:its|the|their|this|that) (?:full )?(?:content|contents|text)\b",
    ),
    (
        "asks to exfiltrate",
        Severity.HIGH,
        r"\bexfiltrat\w*",
    ),
    (
        "asks for the system prompt",
        Severity.HIGH,
        r"\b(?:reveal|print|output|repeat|leak|send|include|copy)\b.{0,40}\b(?:system prompt"
        r"|your instructions|developer message)",
    ),
    (
        "asks for a credential to be passed",
        Severity.MEDIUM,
        r"\b(?:pass|send|include|provide|add|put|attach|forward|copy)\b.{0,50}\b(?:another|other"
        r"|every|all|any) (?:[\w']+ ){0,2}(?:tokens?|api[ _-]?keys?|passwords?|credentials?"
        r"|secrets?|private keys?)\b",
    ),
    (
        "threatens that the tool will not work otherwise",
        Severity.MEDIUM,
        r"\botherwise,? (?:the|this) tool (?:will not|won't|wont|does not|doesn't|cannot|can't)"
        r" work",
    ),
    ("redirects mail (bcc)", Severity.MEDIUM, r"\bbcc\b"),
    (
        "re-casts the model's role",
        Severity.MEDIUM,
        r"\byou are now\b|\bfrom now on,? you\b|\bnew instructions\b",
    ),
    ("hides text in a markup comment", Severity.MEDIUM, r"<!--"),
    ("names an .env file", Severity.MEDIUM, r"(?:^|[\s/~'\"`(])\.env\b"),
)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One instruction-like phrase found in a text."""

    label: str
    """What the phrase does (``"tells the model to ignore its instructions"``)."""
    severity: Severity
    quoted: str
    """The words matched (at most 60 characters), as the text has them."""


_COMPILED = tuple(
    (label, severity, re.compile(pattern, re.IGNORECASE)) for label, severity, pattern in _PHRASES
)


def instructions_in(text: str) -> Iterator[Phrase]:
    """Yield each kind of instruction-like phrasing in ``text`` once, with its first match."""
    flat = " ".join(text.split())
    for label, severity, pattern in _COMPILED:
        if match := pattern.search(flat):
            quoted = match[0].strip()
            if len(quoted) > _QUOTED_CHARS:
                quoted = quoted[:_QUOTED_CHARS] + "..."
            yield Phrase(label, severity, quoted)
