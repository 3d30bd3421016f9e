"""What one scenario says against one server: its checks judged into a `Verdict`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["ARTEFACT", "Verdict", "judge"]


@dataclass(frozen=True)
class Verdict:
    """One scenario against one server: `pass`, `FAIL`, `none` (no verdict) or `ERROR`."""

    outcome: str
    reason: str = ""


def judge(checks: list[dict[str, Any]]) -> Verdict:
    failures = [check for check in checks if check.get("status") == "FAILURE"]
    if failures:
        first = failures[0]
        reason = str(first.get("errorMessage") or first.get("id", ""))
        return Verdict("FAIL", _short(reason))
    if any(check.get("status") == "SUCCESS" for check in checks):
        return Verdict("pass", _unknown_tool_answer(checks))
    return Verdict("none", "only INFO/WARNING checks")


ARTEFACT = "pass is an artefact"
"""How `_unknown_tool_answer` marks a direct pass that came from a missing tool's error result."""


def _unknown_tool_answer(checks: list[dict[str, Any]]) -> str:
    """A note when a passing call got an `isError` "not found" result: the scenario passed
    only because the server answered a call to a tool it lacks with a result, not an error."""
    for check in checks:
        details = cast("dict[str, Any]", check.get("details") or {})
        result = cast("dict[str, Any]", details.get("result") or {})
        blocks = cast("list[dict[str, Any]]", result.get("content") or [])
        texts = [str(block.get("text", "")) for block in blocks]
        if result.get("isError") and any("not found" in text for text in texts):
            return f"{ARTEFACT}, the tool is missing: {_short(' '.join(texts))}"
    return ""


def _short(reason: str) -> str:
    reason = reason.removeprefix("Failed: ")
    reason = re.sub(r"(MCP error -?\d+: )+", lambda m: m.group(1), reason)
    return reason if len(reason) <= 72 else reason[:69] + "..."
