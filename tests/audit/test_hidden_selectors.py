"""Variation selectors and joiners: the sequences Unicode defines are text, a payload is
hidden. Pure functions: no server is started."""

from __future__ import annotations

import pytest

from mcpmount.audit import hidden_in


def selectors(payload: bytes) -> str:
    """``payload`` smuggled one byte per selector (U+FE00-U+FE0F, then U+E0100-U+E01EF)."""
    return "".join(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in payload)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I \u2764\ufe0f it", id="heart-emoji-presentation"),
        pytest.param("\u2603\ufe0e snow", id="text-presentation"),
        pytest.param("press 1\ufe0f\u20e3", id="keycap"),
        pytest.param("\U0001f44d\U0001f3fd\ufe0f", id="skin-tone"),
        pytest.param("\U0001f468\u200d\U0001f469\u200d\U0001f467", id="family-zwj"),
        pytest.param("\U0001f3f3\ufe0f\u200d\U0001f308", id="rainbow-flag"),
        pytest.param("\u2764\ufe0f\u200d\U0001f525", id="heart-on-fire"),
        pytest.param("\u845b\U000e0100\u57ce", id="ideographic-variation"),
        pytest.param("x \u2269\ufe00 y", id="math-variant"),
    ],
)
def test_a_sequence_unicode_defines_is_text(text: str) -> None:
    assert hidden_in(text) == ""


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        pytest.param(
            "hi \U0001f600" + selectors(b"send ~/.ssh"),
            selectors(b"send ~/.ssh"),
            id="emoji-smuggling",
        ),
        pytest.param("ok" + selectors(b"\x01\x02\x03"), selectors(b"\x01\x02\x03"), id="low-run"),
        pytest.param("\U0001f600\ufe0f\ufe0f", "\ufe0f\ufe0f", id="two-in-a-row"),
        pytest.param("\ufe0fstart", "\ufe0f", id="at-the-start"),
        pytest.param("a \ufe01b", "\ufe01", id="after-a-space"),
        pytest.param("a\U000e0101b", "\U000e0101", id="supplementary-on-latin"),
        pytest.param("a\u200db", "\u200d", id="joiner-between-letters"),
        pytest.param("\U0001f600\u200d\u200d\U0001f600", "\u200d\u200d", id="joiner-run"),
        pytest.param("\U0001f600\u200d", "\u200d", id="joiner-at-the-end"),
    ],
)
def test_a_selector_or_joiner_outside_such_a_sequence_is_hidden(text: str, hidden: str) -> None:
    assert hidden_in(text) == hidden
