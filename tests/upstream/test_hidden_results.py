"""Hidden characters in what a server answers never reach the model through the library:
``hidden_text = "strip"`` (the default) gives exactly the answers of the same server
planting none (tests/servers/smuggling_server.py ``--no-hidden``), legitimate emoji kept,
and warns once per kind of answer; ``"refuse"`` refuses each such answer by name. The same
server read straight through the SDK shows the hidden characters really are there.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import anyio
import pydantic
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmount.audit import hidden_in
from mcpmount.config import RegistrySettings
from mcpmount.errors import ResultWithheldError
from mcpmount.registry import Registry
from support import SERVERS, stdio_spec, strings_in, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

SMUGGLING = str(SERVERS / "smuggling_server.py")
VISIBLE = (
    "Sunny \U0001f600, I \u2764\ufe0f it; the \U0001f468\u200d\U0001f469\u200d\U0001f467 goes "
    "out. Wind NE, [8mcalm[0m."
)
"""What every answer of the server says to a person: its text less the hidden characters."""


def _dumped(answer: pydantic.BaseModel, server: str) -> str:
    """``answer`` as JSON, with ``server``'s namespace in URIs written as ``NS``."""
    text = json.dumps(answer.model_dump(mode="json", by_alias=True), ensure_ascii=False)
    return text.replace(f"mcpmount://{server}/", "mcpmount://NS/")


async def _answers(registry: Registry, server: str) -> list[str]:
    """Every kind of answer ``server`` gives: a tool result, a prompt and a read."""
    result = await registry.call(f"{server}__weather")
    prompt = await registry.get_prompt(f"{server}__forecast")
    read = await registry.read_resource(f"mcpmount://{server}/memo://report")
    return [_dumped(answer, server) for answer in (result, prompt, read)]


async def test_the_raw_server_answers_with_hidden_characters(tmp_path: Path) -> None:
    """The differential: straight through the SDK, every answer holds them."""
    params = StdioServerParameters(command=sys.executable, args=[SMUGGLING])
    with (tmp_path / "direct.log").open("w") as errlog, anyio.fail_after(30):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            result = await client.call_tool("weather", {})
            prompt = await client.get_prompt("forecast")
            read = await client.read_resource("memo://report")
            plain = await client.call_tool("plain", {})
    for answer in (result, prompt, read):
        found = hidden_in(strings_in(answer.model_dump(mode="json")))
        assert "\U000e0159" in found  # "I" of the selector payload
        assert "\U000e006f" in found  # "o" of the tag sentence
        assert {"\u200b", "\u202e", "\x1b"} <= set(found)
    assert text_of(result) != VISIBLE
    assert not hidden_in(text_of(plain))


async def test_strip_answers_exactly_what_the_server_planting_none_answers() -> None:
    """A tool result (text, structured content, a resource link, an embedded resource), a
    prompt and a read, each equal to the control's, with no hidden character and every
    legitimate emoji (U+FE0F, a family joined by U+200D) kept."""
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("s", stdio_spec(SMUGGLING))
        await registry.mount("c", stdio_spec(SMUGGLING, "--no-hidden"))
        shown = await _answers(registry, "s")
        control = await _answers(registry, "c")
        result = await registry.call("s__weather")
        weather = registry.get("s__weather").definition.description
    assert shown == control
    assert not hidden_in("".join(strings_in(json.loads(answer)) for answer in shown))
    assert text_of(result) == VISIBLE
    assert result.structured_content == {"summary": VISIBLE, "days": [VISIBLE, "Monday"], "wind": 3}
    for answer in shown:
        assert VISIBLE in answer
    assert (
        weather
        == "Today's weather \u2600\ufe0f, for the \U0001f468\u200d\U0001f469\u200d\U0001f467."
    )


async def test_strip_warns_once_per_server_and_kind_of_answer_by_code_point(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Three calls, two prompts and two reads give three warnings, each naming the server,
    what was asked and what it held as code points, never the text they spell."""
    caplog.set_level(logging.WARNING, logger="mcpmount")
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("s", stdio_spec(SMUGGLING))
        for _ in range(2):
            await _answers(registry, "s")
        await registry.call("s__weather")
        await registry.call("s__plain")
    warnings = [r.getMessage() for r in caplog.records if "hidden characters" in r.getMessage()]
    assert len(warnings) == 3, warnings
    tool, prompt, read = warnings
    assert tool.startswith("server 's': hidden characters stripped from what the model is shown")
    assert "tool 's__weather' answered" in tool
    assert "later tool results of this server are stripped" in tool
    assert "prompt 's__forecast' answered" in prompt
    assert "resource 'mcpmount://s/memo://report' answered" in read
    for warning in warnings:
        assert "variation selectors (U+E0139" in warning
        assert "tag characters (U+E006F" in warning
        assert 'hidden_text = "refuse"' in warning
        assert "Ignore" not in warning
        assert not hidden_in(warning)


async def test_refuse_refuses_each_answer_naming_the_server_what_it_held_and_what_to_do() -> None:
    """The server mounts (its lists are clean); each answer holding hidden characters is
    refused by name, a plain one passes, and the control's answers all pass."""
    async with Registry(RegistrySettings(hidden_text="refuse")) as registry:
        await registry.mount("s", stdio_spec(SMUGGLING))
        await registry.mount("c", stdio_spec(SMUGGLING, "--no-hidden"))
        refused: list[ResultWithheldError] = []
        for ask in (
            registry.call("s__weather"),
            registry.get_prompt("s__forecast"),
            registry.read_resource("mcpmount://s/memo://report"),
        ):
            with pytest.raises(ResultWithheldError) as caught:
                await ask
            refused.append(caught.value)
        assert text_of(await registry.call("s__plain")) == "plain: ok"
        assert len(await _answers(registry, "c")) == 3
    tool, prompt, read = (str(error) for error in refused)
    assert tool.startswith(
        "server 's': tool 's__weather': the tool ran, but its result was withheld: it holds "
        "hidden characters: 49 tag characters (U+E006F"
    )
    assert "357 variation selectors (U+E0139" in tool
    assert prompt.startswith("server 's': prompt 's__forecast': the prompt answered, but")
    assert read.startswith("server 's': resource 'mcpmount://s/memo://report': the resource")
    for message in (tool, prompt, read):
        assert 'set hidden_text = "strip" to receive it with them removed' in message
        assert "Ignore" not in message
        assert not hidden_in(message)
    assert [error.server for error in refused] == ["s", "s", "s"]
