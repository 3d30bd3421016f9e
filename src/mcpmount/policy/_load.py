"""Reading a policy file: Cedar's parser and validator, with each problem at its line.

Cedar says what is wrong but not where (``unexpected token `lik` ``), and its validator
names a policy by its place in the file (``policy3``). The file is split into its
statements (each ends with a ``;`` outside strings and comments), so that a parse error
is found in its statement (and at the line of the token it names, when it names one) and
a schema error at the line its policy starts on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cedarpy

from mcpmount.policy._schema import SCHEMA

__all__ = ["parse_policies", "policy_problems"]

_ADVICE: Final = (
    "fix the policy file (Cedar: https://docs.cedarpolicy.com/policies/syntax-policy.html)"
)
_POLICY_ID: Final = re.compile(r"\bpolicy(\d+)\b")
_TOKEN: Final = re.compile(r"`([^`]+)`")


@dataclass(frozen=True, slots=True)
class _Statement:
    text: str
    """Its text, from just past the statement before (comments and blank lines included)."""
    line: int
    """The line it starts on (1-based)."""
    text_line: int
    """The line its text starts on."""


def parse_policies(path: Path) -> tuple[cedarpy.PolicySet | None, str, list[str]]:
    """Read and check the policy file at ``path``: its policies and text, or None and the
    problems (each ``FILE:LINE: what is wrong``, then what to do)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problem = f"{path}: cannot read the policy file: {exc.strerror}; check serve.policy"
        return None, "", [problem]
    except UnicodeDecodeError:
        return None, "", [f"{path}: the policy file is not UTF-8 text"]
    problems = policy_problems(text, path.name)
    if problems:
        return None, text, problems
    return cedarpy.PolicySet.from_str(text), text, []


def policy_problems(text: str, name: str) -> list[str]:
    """The problems of the policy ``text`` (a file named ``name``): parse errors, then
    (when it parses) schema errors; none when it is fine."""
    statements = _statements(text)
    for statement in statements:
        try:
            cedarpy.PolicySet.from_str(statement.text)
        except ValueError as exc:
            at = _line_of(statement, str(exc))
            return [f"{name}:{at}: {exc}; {_ADVICE}"]
    try:
        cedarpy.PolicySet.from_str(text)  # what one statement alone cannot show (duplicate ids)
    except ValueError as exc:
        return [f"{name}: {exc}; {_ADVICE}"]
    result = cedarpy.validate_policies(text, SCHEMA)  # pyright: ignore[reportUnknownMemberType]
    problems: list[str] = []
    for error in result.errors:
        found = _POLICY_ID.search(error.policy_id or error.error)
        index = int(found.group(1)) if found else None
        line = statements[index].line if index is not None and index < len(statements) else None
        where = f"{name}:{line}" if line is not None else name
        problem = f"{where}: {error.error}; {_ADVICE}"
        if problem not in problems:
            problems.append(problem)
    return problems


def _line_of(statement: _Statement, message: str) -> int:
    """The line of the token a parse error names (its first place in the statement past
    leading comments), else the statement's first line."""
    found = _TOKEN.search(message)
    if found is None:
        return statement.line
    token = re.escape(found.group(1))
    if found.group(1)[:1].isalnum():
        token = rf"\b{token}\b"
    code = _without_comments(statement.text)
    at = re.search(token, code)
    return statement.line if at is None else statement.text_line + code.count("\n", 0, at.start())


def _without_comments(text: str) -> str:
    """``text`` with each ``//`` comment blanked (its line breaks kept)."""
    return "".join(
        " " * len(chunk) if kind == "comment" else chunk for kind, chunk in _chunks(text)
    )


def _statements(text: str) -> list[_Statement]:
    """The statements of ``text``, each ending at a ``;`` outside strings and comments
    (a trailing one without ``;`` is one too, so that its error is found)."""
    statements: list[_Statement] = []
    current: list[str] = []
    line = text_line = 1
    start: int | None = None
    for kind, chunk in _chunks(text):
        if kind == "code" and start is None and chunk.strip():
            start = line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n")
        current.append(chunk)
        line += chunk.count("\n")
        if kind == "code" and chunk == ";":
            at = start if start is not None else line
            statements.append(_Statement("".join(current), at, text_line))
            current, start, text_line = [], None, line
    if start is not None:
        statements.append(_Statement("".join(current), start, text_line))
    return statements


def _chunks(text: str) -> list[tuple[str, str]]:
    """``text`` cut into code, string literals and comments (``;`` alone as code)."""
    chunks: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            chunks.append(("string", text[i : j + 1]))
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            chunks.append(("comment", text[i:j]))
            i = j
        elif ch == ";":
            chunks.append(("code", ";"))
            i += 1
        else:
            j = i
            while j < n and text[j] not in '";' and not text.startswith("//", j):
                j += 1
            chunks.append(("code", text[i:j]))
            i = j
    return chunks
