"""Text a server wrote, made safe to print on the user's terminal.

Names, titles, descriptions, URIs, results and error messages all come from servers, and
a terminal obeys what it is sent: ``ESC[2J`` clears the screen, an OSC sequence retitles
the window or plants a link, U+009B does what ``ESC[`` does, and a bidi override
(U+202E), a zero-width or a tag character make text read otherwise than it is. And rich
parses a plain ``str`` as markup. So such text reaches a console only as `shown` text (a
`rich.text.Text`, never markup, each control and format character written as a visible
escape: ``\\x1b``, ``\\u202e``, ``\\U000e0041``), as JSON through `print_json` (the same
characters as JSON escapes: still exact JSON), or as a log message through
`ShownLogHandler` (logs quote servers' errors, stderr and log messages). A backslash is
left as it is: text that already reads ``\\x1b`` is four harmless characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from logging import LogRecord
from typing import Final

from rich.cells import cell_len
from rich.console import Console, ConsoleRenderable
from rich.highlighter import JSONHighlighter
from rich.logging import RichHandler
from rich.text import Text

__all__ = ["ShownLogHandler", "counted", "print_json", "shown", "visible", "widest"]

_INVISIBLE: Final = (
    "\x7f-\x9f"  # DEL and the C1 controls (U+009B is a CSI)
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"  # format characters
    "\u200b-\u200f"  # zero-width space, joiners, direction marks
    "\u2028-\u202e"  # line and paragraph separators, bidi embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, bidi isolates
    "\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"  # tag characters
    "\ud800-\udfff"  # lone surrogates (JSON can carry them; no terminal encoding can)
)
"""Every character Unicode counts as a control (Cc, less C0, added below), a format
character (Cf), a line or paragraph separator (Zl, Zp) or a surrogate (Cs)."""

_IN_LINE: Final = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
_IN_LINES: Final = re.compile(f"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f{_INVISIBLE}]")
_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    if code < 0x100:
        return _NAMED.get(char) or f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, lines: bool = False) -> str:
    """Return ``text`` with every control and format character as a visible escape.

    Args:
        text: What a server wrote.
        lines: Keep newlines (``\\r\\n`` too) and tabs, for text printed on lines of its
            own; otherwise they are escaped as well (a table cell, a name).
    """
    return (_IN_LINES if lines else _IN_LINE).sub(_escape, text)


def widest(texts: Iterable[str]) -> int:
    """Return the most cells any of ``texts`` takes once `shown` (a column's least width,
    so that no name is cut; 0 for none)."""
    return max((cell_len(visible(text)) for text in texts), default=0)


def shown(text: str, style: str = "", *, lines: bool = False) -> Text:
    """Return ``text`` as a `rich.text.Text` to print: never markup, every control and
    format character visible (see `visible`)."""
    return Text(visible(text, lines=lines), style=style)


_IN_JSON: Final = re.compile(f"[{_INVISIBLE}]")
"""What ``json.dumps(ensure_ascii=False)`` writes raw that a terminal must not see (it
escapes C0 itself). None of it can occur outside a JSON string."""


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON escapes a character beyond the BMP as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def print_json(out: Console, text: str) -> None:
    """Print the JSON ``text`` as `Console.print_json` does (indented, highlighted on a
    terminal, non-ASCII kept readable), but with control and format characters escaped."""
    dumped = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    rendered = JSONHighlighter()(_IN_JSON.sub(_json_escape, dumped))
    rendered.no_wrap = True
    rendered.overflow = None
    out.print(rendered, soft_wrap=True)


class ShownLogHandler(RichHandler):
    """A `RichHandler` whose messages keep their lines but show every other control and
    format character (see `visible`)."""

    def render_message(self, record: LogRecord, message: str) -> ConsoleRenderable:
        return super().render_message(record, visible(message, lines=True))


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless there is one: "1 server", "3 servers"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
