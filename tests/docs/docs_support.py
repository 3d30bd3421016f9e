"""The fenced code blocks of the docs, and how to run what they show.

A block is what a reader copies, so each is checked by what it is (`tests/docs/test_docs.py`).
A few comments on the line before a block say more:

- ``<!-- docs-test: compile-only REASON -->``: a Python program that needs what CI has not
  (an API key, the network); it is compiled, and the configs it names are loaded.
- ``<!-- docs-test: output -->`` before a ``text`` block: what the Python program just
  before it prints, compared after `normalize`.

A ``console`` block is a transcript: each ``$ mcpmount ...`` line is run (in a terminal 100
columns wide, as a reader's would be) and what it prints must be the lines that follow it.
A page's ``<!-- include: PATH[:SECTION] -->`` region is a committed copy of that file (or
section), kept current by ``docs/hooks/reference.py``: its blocks are checked in the file
they come from, and a file included whole is checked as a page of its own.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
WIDTH: Final = 140
"""The terminal width transcripts are shown and run at."""

SHOWN_ROOT: Final = "/home/you/mcpmount"
"""Where the docs show the repository cloned; a transcript's real root is printed as this."""

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^`]*)$")
_MARKER = re.compile(r"^<!-- docs-test: (?P<kind>compile-only|output)(?P<reason>.*) -->$")
_INCLUDE = re.compile(r"^<!-- include: (?P<path>[^\s:>]+)(?::(?P<section>[\w-]+))? -->$")
_INCLUDE_END = "<!-- end: include -->"


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int
    """The line of its opening fence, from 1."""
    lang: str
    """The first word of its info string (``python``, ``toml``, ``console``, ...)."""
    text: str
    marker: str | None = None
    """``compile-only`` or ``output`` when the line before it says so."""

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md, every page of docs/, and every Markdown file a page includes whole."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in list(found):
        for line in page.read_text().splitlines():
            match = _INCLUDE.match(line)
            if match and match["section"] is None and match["path"].endswith(".md"):
                included = ROOT / match["path"]
                if included not in found:
                    found.append(included)
    return found


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order."""
    found: list[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if _INCLUDE.match(lines[i]):  # a copy: its blocks are checked where they come from
            i = lines.index(_INCLUDE_END, i) + 1
            continue
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        marker = _MARKER.match(lines[i - 1].strip()) if i else None
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][indent:])
            j += 1
        lang = (opening["info"].split() or [""])[0]
        kind = marker["kind"] if marker else None
        found.append(Block(path, i + 1, lang, "\n".join(body) + "\n", kind))
        i = j + 1
    return found


def every_block() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


# -- running ----------------------------------------------------------------------------------


def environment() -> dict[str, str]:
    """What programs run with: this interpreter's directory first on PATH, as an active venv
    has it (the blocks run ``mcpmount`` from PATH), and a terminal ``WIDTH`` wide."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "COLUMNS": str(WIDTH), "LINES": "50", "TERM": "dumb"}


def run_in_terminal(argv: list[str], timeout: float) -> tuple[int, str]:
    """Run ``argv`` from the repository root with a terminal as its stdout, as a reader does.

    Returns its exit code and what it printed: stdout, then stderr (rich writes its tables
    to stdout and its summaries to stderr; a terminal shows the summary last).
    """
    leader, follower = os.openpty()
    try:
        process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    finally:
        os.close(follower)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], timeout)
            if not ready:
                process.kill()
                raise TimeoutError(f"{argv} printed nothing for {timeout} s")
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
        assert process.stderr is not None
        err = process.stderr.read()
        process.stderr.close()
        code = process.wait(timeout)
    finally:
        os.close(leader)
    text = out.decode().replace("\r\n", "\n") + err.decode()
    return code, text


_VOLATILE = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:\d\d|Z)?"), "<time>"),
    (re.compile(r"\b\d+ ms\b"), "<n> ms"),
    (re.compile(r"\b\d+\.\d+ s\b"), "<n> s"),
    (re.compile(r"[━─]+"), "─"),
    (re.compile(r"\s+"), " "),
)
"""Times and durations differ from run to run; a table's rules and padding with them."""


def normalize(text: str) -> list[str]:
    """The lines of ``text`` with what differs between runs made equal, blank lines dropped."""
    text = text.replace(str(ROOT), SHOWN_ROOT)
    lines: list[str] = []
    for line in text.splitlines():
        for pattern, replacement in _VOLATILE:
            line = pattern.sub(replacement, line)
        if line.strip():
            lines.append(line.strip())
    return lines


@dataclass(frozen=True, slots=True)
class Step:
    """One ``$ command`` of a transcript and the lines shown after it."""

    command: str
    shown: str


def transcript(block: Block) -> list[Step]:
    steps: list[Step] = []
    for chunk in re.split(r"^\$ ", block.text, flags=re.M)[1:]:
        command, _, shown = chunk.partition("\n")
        steps.append(Step(command, shown))
    return steps
