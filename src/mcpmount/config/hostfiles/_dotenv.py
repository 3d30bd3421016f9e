"""``envFile``: the dotenv file a host file's stdio server takes variables from.

VS Code and Cursor both let a stdio server name one (``"envFile": "${workspaceFolder}/.env"``).
Its lines are ``KEY=VALUE``, optionally after ``export``; blank lines and lines starting
with ``#`` are skipped. A value may be in double quotes (where ``\\n``, ``\\"`` and ``\\\\``
are escapes), in single quotes (literal), or bare (up to a `` #`` comment, trimmed).
Nothing is expanded: a value is what the file says.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["read_env_file"]

_LINE = re.compile(r"\s*(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(?P<value>.*?)\s*")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def read_env_file(path: Path, where: str, problems: list[str]) -> dict[str, str]:
    """Return the variables of the dotenv file at ``path``, adding a problem for each line
    it cannot read (named by its number, never by its value) under ``where``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        problems.append(f"{where}: {path} not found")
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not valid UTF-8"
        problems.append(f"{where}: {path} cannot be read: {reason}")
        return {}
    found: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = _LINE.fullmatch(raw)
        if match is None:
            problems.append(f"{where}: {path} line {number}: not KEY=VALUE")
            continue
        value = _value(match["value"])
        if value is None:
            problems.append(f"{where}: {path} line {number}: a quote is not closed")
            continue
        found[match["key"]] = value
    return found


def _value(text: str) -> str | None:
    """Return a dotenv value without its quotes or comment; None if a quote is not closed."""
    if text[:1] == "'":
        end = text.find("'", 1)
        return None if end < 0 else text[1:end]
    if text[:1] == '"':
        out: list[str] = []
        i = 1
        while i < len(text):
            char = text[i]
            if char == '"':
                return "".join(out)
            if char == "\\" and i + 1 < len(text):
                out.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
                i += 2
                continue
            out.append(char)
            i += 1
        return None
    return re.split(r"\s+#", text, maxsplit=1)[0].strip()
