"""What servers write reaches the user's terminal as visible text, never as control codes.

Every command runs against ``hostile_text_server.py``, whose names, descriptions, URIs,
results, errors and stderr all carry a screen clear, an OSC title, a C1 CSI, bidi and
zero-width characters, a tag character, DEL and rich markup (the registry strips those
characters from descriptions and from results, prompts and reads, ``hidden_text``; raw
names, URIs, MIME types, errors and stderr keep them). The command writes to a
pseudo-terminal, so tables, colours, the spinner and logs take a terminal's paths.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

import pytest

from cli.cli_support import mcpmount, terminal
from mcpmount.cli._shown import visible
from support import SERVERS, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

HOSTILE = (
    "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202etxt.exe\u2066\u200b\U000e0041\x7f"
    " [bold red]loud[/] [link=https://evil.example]click[/link]"
)
"""What the server writes everywhere (its module says the same)."""

SHOWN = HOSTILE.encode("unicode_escape").decode()
"""``HOSTILE`` as the user must see it: each control as Python writes it in a string
(``\\x1b``, ``\\u202e``, ``\\U000e0041``), the markup literal."""

IN_URI = SHOWN.replace(r"\x1b[2J\x1b]0;pwned\x07", "[2J]0;pwned").replace(r"\x7f", "")
"""Shown as in the resource's URI, which may not hold C0 controls or DEL."""

STRIPPED = "[2J]0;pwned31mtxt.exe [bold red]loud[/] [link=https://evil.example]click[/link]"
"""``HOSTILE`` with its hidden characters stripped, as the registry lists a description and
returns a result (``hidden_text = "strip"``): the markup is left, to be printed literally."""

CUT = STRIPPED[:40]
"""The start of ``STRIPPED``: what a description column of 60 cells has room for."""

RAW = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
"""What a terminal must never be sent from a server: C0 (less newline and tab), DEL, C1,
zero-width, bidi and tag characters."""

RICH_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[1A|\r")
"""What rich itself sends a terminal: colours, the spinner's cursor moves, and the
terminal's own carriage return before each newline."""


def hostile(tmp_path: Path, *flags: str) -> str:
    args = json.dumps([str(SERVERS / "hostile_text_server.py"), *flags])
    body = f'[servers.h]\ncommand = "{sys.executable}"\nargs = {args}\ninvalid_names = "sanitize"\n'
    return write_config(tmp_path, body)


def on_terminal(*args: str) -> tuple[int, str]:
    """Run ``mcpmount args`` on a pseudo-terminal (`terminal`); return its exit code and
    what the terminal received, less rich's own codes, once no raw control or format
    character is found in it."""
    code, received = terminal(*args)
    text = RICH_OWN.sub("", received)
    found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
    assert not found, f"{args[0]} sent {found} raw to the terminal:\n{text!r}"
    return code, text


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        pytest.param(["tools"], 0, [SHOWN, CUT], id="tools"),
        pytest.param(["search", "paint"], 0, [CUT], id="search"),
        pytest.param(["resources"], 0, [IN_URI, CUT], id="resources"),
        pytest.param(["prompts"], 0, [CUT], id="prompts"),
        pytest.param(
            ["call", "h__paint"], 0, [f"line one\n{STRIPPED}", f"[image: {SHOWN}, 4"], id="call"
        ),
        pytest.param(["call", "h__fail"], 1, [STRIPPED, "h__fail reported an error"], id="error"),
        pytest.param(["call", "h__explode"], 1, [f"exploded: {SHOWN}"], id="rpc-error"),
        pytest.param(["call", "h__crash"], 1, [f"dying: {SHOWN}"], id="crash-logged"),
        pytest.param(["prompt", "h__greet"], 0, [f"user: {STRIPPED}"], id="prompt"),
        pytest.param(["read", "mcpmount://h/memo://x/a"], 0, [STRIPPED], id="read"),
    ],
)
def test_server_text_reaches_a_terminal_as_visible_escapes_and_literal_markup(
    tmp_path: Path, args: list[str], code: int, expected: list[str]
) -> None:
    """Tables, results, errors and logs show each control as an escape and markup as text."""
    returncode, text = on_terminal(*args, hostile(tmp_path))
    assert returncode == code, text
    for piece in expected:
        assert piece in text


@pytest.mark.parametrize("command", ["check", "status"])
def test_a_servers_stderr_in_the_error_column_reaches_a_terminal_as_visible_escapes(
    tmp_path: Path, command: str
) -> None:
    """A server that fails to start quotes its stderr in the table: visibly, never obeyed."""
    returncode, text = on_terminal(command, hostile(tmp_path, "--crash"))
    assert returncode == 1
    assert f"cannot start: {SHOWN}" in text


def test_json_escapes_every_control_and_parses_back_to_the_exact_text(tmp_path: Path) -> None:
    """--json sends no raw control, bidi or tag character, and is still exact JSON."""
    config = hostile(tmp_path)
    tools = mcpmount("tools", config, "--json")
    failed = mcpmount("call", "h__fail", config, "--json")
    assert (tools.returncode, failed.returncode) == (0, 1), tools.stderr + failed.stderr
    for done in (tools, failed):
        found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(done.stdout)})
        assert not found, f"{done.args} sent {found} raw"
    descriptions = {row["name"]: row["description"] for row in json.loads(tools.stdout)}
    assert descriptions["h__paint"] == STRIPPED
    assert json.loads(failed.stdout)["content"][0]["text"] == STRIPPED


def test_every_control_and_format_character_is_made_visible() -> None:
    """The escaped set is Unicode's own (Cc, Cf, Zl, Zp, Cs), not a hand-picked few."""
    hidden = "".join(
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
    )
    assert len(hidden) > 2000
    left = {f"U+{ord(c):04X}" for c in visible(hidden) if not c.isascii() or not c.isprintable()}
    assert not left
    assert visible("a\tb\r\nc\rd", lines=True) == "a\tb\r\nc\\rd"
