"""What the isolation tests compare: an answer with the probed name blanked, the name's
counterpart in a namespace that is not mounted, the names an error suggests, and the
secrets of the hidden namespace found in what a client received.

Import it as ``serve_isolation.isolation_compare_support``.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Final

from serve_isolation.isolation_support import HIDDEN, NOWHERE, PUB_TOOLS, SECRETS


def blank(value: object, *names: str) -> str:
    """``value`` as JSON with each of ``names`` (longest first) replaced by ``<name>``."""
    text = json.dumps(value, sort_keys=True)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, "<name>")
    return text


def counterpart(name: str) -> str:
    """``name`` with the hidden namespace replaced by `NOWHERE` (not mounted)."""
    return name.replace(HIDDEN, NOWHERE)


_SUGGESTED: Final = re.compile(r"; did you mean (.+)\?$")


def suggestions(message: str) -> list[str]:
    """The names an unknown-name error suggests (none when it suggests none)."""
    match = _SUGGESTED.search(message)
    return match.group(1).split(", ") if match else []


def close_to(name: str, visible: tuple[str, ...] = PUB_TOOLS) -> list[str]:
    """What the registry would suggest for ``name`` among ``visible`` names only."""
    return difflib.get_close_matches(name, visible, n=3)


def leaks(received: str, *sent: str) -> list[str]:
    """Each secret in ``received`` once the names the client sent itself are blanked where
    an answer quotes them (``'name'``, or a JSON string)."""
    text = received
    for name in sorted(sent, key=len, reverse=True):
        for quote in ("'", '"', '\\"'):
            text = text.replace(f"{quote}{name}{quote}", "<sent>")
    lowered = text.lower()
    found: list[str] = []
    for secret in SECRETS:
        at = lowered.find(secret.lower())
        if at >= 0:
            found.append(f"{secret!r} in ...{text[max(0, at - 120) : at + 80]}...")
    return found
