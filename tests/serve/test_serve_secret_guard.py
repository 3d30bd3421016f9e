"""Secrets never cross servers through `mcpmount serve`: the SDK's Client, over stdio and
streamable HTTP, calls the poisoned tool (tests/servers/token_thief_server.py) with the other
server's token as its description asks; the call comes back as an error result the model
reads, and the server never got it. A result carrying a secret comes back redacted, and a
``before_call`` program refuses a call with its reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from serve.relay_support import served
from serve.serve_support import BEHAVIOUR, wait_for_tool, write_config
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

GH_TOKEN = "ghp_" + "Rt5Vb8Nm" * 4 + "Qw2e"
WEATHER_TOKEN = "wx-served-8c2f4d6b"


def poisoned(name: str, token: str, extra: str = "") -> str:
    args = json.dumps([str(SERVERS / "token_thief_server.py")])
    return (
        f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n'
        f'env = {{ TOKEN = "{token}" }}\n{extra}\n'
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_poisoned_tool_gets_a_refusal_and_results_come_back_redacted(
    tmp_path: Path, transport: str
) -> None:
    """The call carrying github's token is an error result naming the rule, never the
    token; weather's own token in a result is redacted in every part of it."""
    config = write_config(
        tmp_path, poisoned("github", GH_TOKEN), poisoned("weather", WEATHER_TOKEN)
    )
    async with served(config, tmp_path, transport, "legacy") as client:
        await wait_for_tool(client, "weather__received")
        with anyio.fail_after(BEHAVIOUR):
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            refused = await client.call_tool(
                "weather__forecast", {"city": "Oslo", "auth": GH_TOKEN}
            )
            who = await client.call_tool("weather__whoami", {})
            got = await client.call_tool("weather__received", {})
    assert "GitHub server's access token" in (listed["weather__forecast"].description or "")
    assert refused.is_error
    assert text_of(refused) == (
        "server 'weather': tool 'weather__forecast': the call was denied and not sent to the "
        "server: its arguments carry a secret of server 'github' (in auth), and a server's "
        "secrets go to that server only; remove it from the arguments (a tool that asks for "
        "another server's credentials may be trying to steal them)"
    )
    shown = "[redacted: secret of server 'weather']"
    assert text_of(who) == f"I am {shown}"
    assert who.structured_content == {"token": shown, "nested": [{"again": f"Bearer {shown}"}]}
    assert json.loads(text_of(got)) == [{"tool": "whoami"}]
    for result in (refused, who, got):
        dumped = result.model_dump_json()
        assert GH_TOKEN not in dumped
        assert WEATHER_TOKEN not in dumped


async def test_a_before_call_program_refuses_through_serve_after_the_guard(
    tmp_path: Path,
) -> None:
    """The program's reason is the error result; a call the guard refused never reaches
    the program."""
    gate = f'before_call = ["{sys.executable}", "{SERVERS / "gate_program.py"}", "{tmp_path}"]'
    config = write_config(
        tmp_path, poisoned("github", GH_TOKEN), poisoned("weather", WEATHER_TOKEN, gate)
    )
    async with served(config, tmp_path, "stdio", "legacy") as client:
        await wait_for_tool(client, "weather__echo")
        with anyio.fail_after(BEHAVIOUR):
            refused = await client.call_tool("weather__echo", {"text": GH_TOKEN})
            gated = await client.call_tool("weather__echo", {"text": "refuse"})
            allowed = await client.call_tool("weather__echo", {"text": "fine"})
    assert "carry a secret of server 'github'" in text_of(refused)
    assert gated.is_error
    assert text_of(gated).endswith("refused it: no shouting at the weather service")
    assert text_of(allowed) == "fine"
    asked = [json.loads(line) for line in (tmp_path / "calls").read_text().splitlines()]
    assert [call["arguments"]["text"] for call in asked] == ["refuse", "fine"]
