"""``mcpmount audit`` reports a payload hidden in variation selectors, and leaves
legitimate emoji alone: a heart with U+FE0F and a family joined by U+200D are neither
reported nor stripped (tests/servers/smuggling_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import SERVERS, script_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

EMOJI = "Today's weather \u2600\ufe0f, for the \U0001f468\u200d\U0001f469\u200d\U0001f467."
"""``weather``'s description, less its payload: what the model must be shown."""


def smuggling(*flags: str) -> str:
    return script_server("s", str(SERVERS / "smuggling_server.py"), *flags)


def hidden_findings(config: str) -> list[dict[str, str | None]]:
    done = mcpmount("audit", config, "--json")
    assert done.returncode in (0, 1), done.stderr
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"] == "hidden-text"]


def test_audit_reports_a_variation_selector_payload_by_code_point(tmp_path: Path) -> None:
    """The payload (22 selectors of U+FE00-U+FE0F, half a byte each) is a high finding on
    ``weather``, named by code point; the description the model is shown keeps the emoji."""
    config = write_config(tmp_path, smuggling("--in-lists"))
    [finding] = hidden_findings(config)
    assert (finding["server"], finding["kind"], finding["item"]) == ("s", "tool", "weather")
    assert finding["severity"] == "high"
    assert "22 variation selectors (U+FE07 U+FE02 U+FE06 U+FE05 ...)" in (finding["message"] or "")
    tools = mcpmount("tools", config, "--json")
    assert tools.returncode == 0, tools.stderr
    shown = {row["name"]: row["description"] for row in json.loads(tools.stdout)}
    assert shown["s__weather"] == EMOJI


def test_audit_does_not_report_nor_strip_legitimate_emoji(tmp_path: Path) -> None:
    """The same description without the payload: no hidden-text finding, shown as listed."""
    config = write_config(tmp_path, smuggling())
    assert hidden_findings(config) == []
    tools = mcpmount("tools", config, "--json")
    assert tools.returncode == 0, tools.stderr
    shown = {row["name"]: row["description"] for row in json.loads(tools.stdout)}
    assert shown["s__weather"] == EMOJI
