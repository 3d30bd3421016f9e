"""What an upstream server asks while answering ``prompts/get`` or ``resources/read``
reaches the downstream client of that request, as during ``tools/call``.

`mcpmount serve` in front of tests/servers/asking_server.py (its prompt ``interview`` and
template ``asked://{topic}`` elicit a form), driven by the SDK's Client over stdio and
streamable HTTP, in the handshake era (a request on the prompt's or read's stream) and
the 2026-07-28 era (``InputRequiredResult`` rounds the Client drives itself); the
upstream on either era.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from asking_support import prompt_text, read_text
from serve.relay_support import ERAS, EVERY_WAY, Host, served
from serve.serve_support import BEHAVIOUR, asking, wait_for_tool, write_config
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

RESOURCE = "mcpmount://ask/asked://y"

CASES = [(*way, "auto") for way in EVERY_WAY] + [("stdio", *era, "legacy") for era in ERAS]
"""(transport, downstream mode, downstream version, upstream protocol)."""


@pytest.mark.parametrize(("transport", "mode", "version", "upstream"), CASES)
async def test_a_prompt_and_a_read_that_ask_reach_the_downstream_client(
    tmp_path: Path, transport: str, mode: str, version: str, upstream: str
) -> None:
    config = write_config(tmp_path, asking("ask", extra=f'protocol = "{upstream}"'))
    host = Host()
    async with served(config, tmp_path, transport, mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__sample")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            prompt = await client.get_prompt("ask__interview", {"topic": "x"})
            read = await client.read_resource(RESOURCE)
    assert prompt_text(prompt) == "user answered: because"
    assert read_text(read) == "user answered: because"
    assert host.messages == ["why x?", "why y?"]


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_client_without_elicitation_gets_the_declined_answer(
    tmp_path: Path, mode: str, version: str
) -> None:
    """serve offers elicitation upstream for every client; for one that cannot answer it
    declines, and the server renders what a decline means to it."""
    config = write_config(tmp_path, asking("ask"))
    async with served(config, tmp_path, "stdio", mode) as client:
        await wait_for_tool(client, "ask__sample")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            prompt = await client.get_prompt("ask__interview", {"topic": "x"})
            read = await client.read_resource(RESOURCE)
    assert prompt_text(prompt) == "user action: decline"
    assert read_text(read) == "user action: decline"


@pytest.mark.parametrize(("transport", "mode", "version", "upstream"), CASES)
async def test_a_url_elicitation_completion_reaches_the_client_it_went_to(
    tmp_path: Path, transport: str, mode: str, version: str, upstream: str
) -> None:
    """A handshake-era upstream's ``notifications/elicitation/complete`` is told to the
    handshake-era client whose URL elicitation it completes, with the same id; neither a
    2026-07-28 upstream (no such notice) nor a 2026-07-28 client (none to take) has it."""
    config = write_config(tmp_path, asking("ask", extra=f'protocol = "{upstream}"'))
    host = Host()
    callbacks = host.callbacks()
    async with served(
        config, tmp_path, transport, mode, on_message=host.on_message, **callbacks
    ) as client:
        await wait_for_tool(client, "ask__elicit_url")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            visited = await client.call_tool("ask__elicit_url", {"url": "https://x.test/a"})
            told = upstream == "legacy" and mode == "legacy"
            if told:
                await host.told_complete.wait()
    assert text_of(visited) == "user action: accept"
    assert host.completed == (["visit-1"] if told else [])
