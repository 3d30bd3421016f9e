"""The model-API adapters, against real servers, and the two example agent loops."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import mcpmount
from mcpmount.adapters import AnthropicAdapter, OpenAIAdapter

ROOT = Path(__file__).parent.parent
DEMO = ROOT / "configs" / "demo.toml"
FIXTURE = Path(__file__).parent / "servers" / "fixture_server.py"

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


def run_example(script: str) -> subprocess.CompletedProcess[str]:
    # The demo's servers run on ${MCPMOUNT_PYTHON}, this interpreter: no venv on PATH needed.
    return subprocess.run(
        [sys.executable, script, str(DEMO)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


def config(tmp_path: Path) -> mcpmount.RegistryConfig:
    args = json.dumps([str(FIXTURE)])
    body = f'[servers.one]\ncommand = "{sys.executable}"\nargs = {args}\ndefer = ["add"]\n'
    (tmp_path / "a.toml").write_text(body)
    return mcpmount.load_config(tmp_path / "a.toml")


def test_the_openai_example_finds_a_deferred_tool_calls_it_and_sees_an_error() -> None:
    """examples/openai_loop.py: search grows the tool list; an unknown name is an error result."""
    done = run_example("examples/openai_loop.py")
    assert done.returncode == 0, done.stderr
    assert "model calls clock__convert_time  [8 tools shown]" in done.stdout
    assert "2026-11-29T17:00+09:00" in done.stdout
    assert "Error: no mounted tool is named 'clock__no_such_tool'" in done.stdout


def test_the_anthropic_example_gets_tool_references_and_calls_the_found_tool() -> None:
    """examples/anthropic_loop.py: tool_search answers with tool_reference blocks."""
    done = run_example("examples/anthropic_loop.py")
    assert done.returncode == 0, done.stderr
    assert "'type': 'tool_reference', 'tool_name': 'clock__convert_time'" in done.stdout
    assert "'text': '2026-11-29T17:00+09:00'" in done.stdout
    assert "(is_error)" in done.stdout


async def test_anthropic_tools_mark_deferred_ones_and_add_one_search_tool(tmp_path: Path) -> None:
    """Every tool is listed; deferred ones carry defer_loading; server-side search swaps ours."""
    with anyio.fail_after(20):
        async with mcpmount.open_registry(config(tmp_path)) as registry:
            ours = AnthropicAdapter(registry).tools()
            bm25 = AnthropicAdapter(registry, search="bm25").tools()
    by_name = {tool["name"]: tool for tool in ours}
    assert by_name["one__add"]["defer_loading"] is True
    assert "defer_loading" not in by_name["one__echo"]
    assert set(by_name["one__echo"]) == {"name", "description", "input_schema"}
    assert "tool_search" in by_name
    assert bm25[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    assert "tool_search" not in {tool["name"] for tool in bm25}


async def test_openai_calls_map_bad_json_and_tool_errors_to_error_messages(
    tmp_path: Path,
) -> None:
    """Malformed arguments and isError results reach the model as "Error: ..." text."""
    with anyio.fail_after(20):
        async with mcpmount.open_registry(config(tmp_path)) as registry:
            chat = OpenAIAdapter(registry)
            assert all(len(str(t["function"]["name"])) <= 64 for t in chat.tools())  # type: ignore[index]
            bad = await chat.run(
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "one__echo", "arguments": "{"},
                }
            )
            failed = await chat.run(
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "one__fail", "arguments": '{"message": "disk full"}'},
                }
            )
            responses = OpenAIAdapter(registry, api="responses")
            added = await responses.run(
                {
                    "type": "function_call",
                    "call_id": "c3",
                    "name": "one__add",
                    "arguments": '{"a": 1, "b": 2}',
                }
            )
    assert bad["role"] == "tool"
    assert bad["tool_call_id"] == "c1"
    assert str(bad["content"]).startswith("Error: one__echo: the arguments are not valid JSON")
    assert str(failed["content"]).startswith("Error: ")
    assert "disk full" in str(failed["content"])
    assert added == {"type": "function_call_output", "call_id": "c3", "output": "3"}


async def test_openai_arguments_json_cannot_carry_are_an_error_the_model_sees(
    tmp_path: Path,
) -> None:
    """A model's lone surrogate or NaN is refused before it reaches the server, as an
    "Error: ..." result; the server answers the next call."""
    with anyio.fail_after(20):
        async with mcpmount.open_registry(config(tmp_path)) as registry:
            chat = OpenAIAdapter(registry)
            refused = [
                await chat.run(
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "one__echo", "arguments": arguments},
                    }
                )
                for i, arguments in enumerate(['{"text": "\\ud800"}', '{"text": NaN}'])
            ]
            after = await chat.run(
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "one__echo", "arguments": '{"text": "after"}'},
                }
            )
    assert "lone surrogate" in str(refused[0]["content"])
    assert "is nan" in str(refused[1]["content"])
    assert all(str(r["content"]).startswith("Error: ") for r in refused)
    assert after["content"] == "after"
