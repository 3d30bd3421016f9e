"""Through `mcpmount serve`, in both protocol eras, a stock client is answered with no
hidden character a server planted in a tool result, a prompt or a resource's contents
(``hidden_text = "strip"``): exactly what the same server planting none answers
(tests/servers/smuggling_server.py, ``--no-hidden``). Under ``"refuse"`` each such answer
is refused by name. tests/upstream/test_hidden_results.py shows the raw server's answers
do hold them.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pydantic
import pytest
from mcp import Client, MCPError

from mcpmount.audit import hidden_in
from serve.relay_support import ERAS, served
from serve.serve_support import BEHAVIOUR, wait_for_tool, write_config
from support import SERVERS, script_server, strings_in, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

VISIBLE = (
    "Sunny \U0001f600, I \u2764\ufe0f it; the \U0001f468\u200d\U0001f469\u200d\U0001f467 goes "
    "out. Wind NE, [8mcalm[0m."
)
"""What every answer of the server says to a person."""


def smuggling(name: str, *flags: str, extra: str = "") -> str:
    return script_server(name, str(SERVERS / "smuggling_server.py"), *flags, extra=extra)


async def _answers(client: Client, server: str) -> list[dict[str, object]]:
    """A tool result, a prompt and a read of ``server``, as JSON less namespaces and _meta."""
    with anyio.fail_after(BEHAVIOUR):
        answers: list[pydantic.BaseModel] = [
            await client.call_tool(f"{server}__weather", {}),
            await client.get_prompt(f"{server}__forecast"),
            await client.read_resource(f"mcpmount://{server}/memo://report"),
        ]
    dumped = [answer.model_dump(mode="json", by_alias=True, exclude={"meta"}) for answer in answers]
    text = json.dumps(dumped, ensure_ascii=False).replace(f"mcpmount://{server}/", "NS/")
    return json.loads(text)


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_served_answers_carry_no_hidden_character(
    tmp_path: Path, mode: str, version: str
) -> None:
    """Each answer equals the control's, holds no hidden character, and keeps the
    legitimate emoji."""
    config = write_config(tmp_path, smuggling("s"), smuggling("c", "--no-hidden"))
    async with served(config, tmp_path, "stdio", mode) as client:
        assert client.protocol_version == version
        await wait_for_tool(client, "s__weather")
        await wait_for_tool(client, "c__weather")
        shown = await _answers(client, "s")
        control = await _answers(client, "c")
    assert shown == control
    assert not hidden_in(strings_in(shown))
    assert VISIBLE in json.dumps(shown, ensure_ascii=False)
    assert shown[0]["structuredContent"] == {
        "summary": VISIBLE,
        "days": [VISIBLE, "Monday"],
        "wind": 3,
    }


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_served_answers_with_hidden_characters_are_refused_under_refuse(
    tmp_path: Path, mode: str, version: str
) -> None:
    """The tool call is an error result naming the server, the tool, what it held and what
    to do; the prompt and the read are errors saying the same; a plain call passes."""
    extra = 'hidden_text = "refuse"'
    config = write_config(tmp_path, smuggling("s", extra=extra))
    async with served(config, tmp_path, "stdio", mode) as client:
        assert client.protocol_version == version
        await wait_for_tool(client, "s__weather")
        with anyio.fail_after(BEHAVIOUR):
            result = await client.call_tool("s__weather", {})
            plain = await client.call_tool("s__plain", {})
            errors: list[str] = []
            for ask in (
                client.get_prompt("s__forecast"),
                client.read_resource("mcpmount://s/memo://report"),
            ):
                with pytest.raises(MCPError) as caught:
                    await ask
                errors.append(caught.value.message)
    assert result.is_error
    said = text_of(result)
    assert said.startswith(
        "server 's': tool 's__weather': the tool ran, but its result was withheld: it holds "
        "hidden characters: 49 tag characters (U+E006F"
    )
    assert text_of(plain) == "plain: ok"
    prompt, read = errors
    assert (
        "server 's': prompt 's__forecast': the prompt answered, but its result was withheld"
        in prompt
    )
    assert "server 's': resource 'mcpmount://s/memo://report': the resource answered" in read
    for message in (said, prompt, read):
        assert "variation selectors (U+E0139" in message
        assert 'set hidden_text = "strip" to receive it with them removed' in message
        assert not hidden_in(message)
