"""A server may ask its client while answering ``prompts/get`` or ``resources/read``, not
only ``tools/call``: the handlers answer, told the prompt or resource and the context."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import anyio
import pytest

from asking_support import BEHAVIOUR, Recorder, asking, prompt_text, read_text
from mcpmount.errors import UpstreamError
from mcpmount.handlers import ClientHandlers
from mcpmount.registry import Registry
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

Era = Literal["auto", "legacy"]
ERAS: list[Era] = ["auto", "legacy"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_prompt_and_a_resource_that_ask_are_answered_and_attributed(era: Era) -> None:
    recorder = Recorder()
    async with Registry(handlers=recorder.handlers()) as registry:
        await registry.mount("a", asking(protocol=era))
        with anyio.fail_after(BEHAVIOUR):
            prompt = await registry.get_prompt("a__interview", {"topic": "x"}, context="turn-1")
            read = await registry.read_resource("mcpmount://a/asked://y", context="turn-2")
    assert prompt_text(prompt) == "user answered: because"
    assert read_text(read) == "user answered: because"
    assert recorder.asked == [
        ("elicitation:form", "a", "a__interview", "turn-1"),
        ("elicitation:form", "a", "mcpmount://a/asked://y", "turn-2"),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_a_prompt_that_asks_without_a_handler_fails_in_its_words(era: Era) -> None:
    """No handler, no capability: the server sees that and fails the prompt, in its words."""
    async with Registry(handlers=ClientHandlers()) as registry:
        await registry.mount("a", asking(protocol=era))
        with anyio.fail_after(BEHAVIOUR), pytest.raises(UpstreamError) as raised:
            await registry.get_prompt("a__interview", {"topic": "x"})
    assert raised.value.tool == "a__interview"
    assert "Elicitation not supported" in raised.value.upstream_message


@pytest.mark.parametrize("era", ERAS)
async def test_a_url_elicitation_completion_reaches_its_handler_in_the_handshake_era(
    era: Era,
) -> None:
    """The handshake era's ``notifications/elicitation/complete`` reaches the handler with
    the server and the id; the 2026-07-28 era has no such notice."""
    recorder = Recorder()
    completed: list[tuple[str, str]] = []
    done = anyio.Event()

    async def complete(server: str, elicitation_id: str) -> None:
        completed.append((server, elicitation_id))
        done.set()

    handlers = replace(recorder.handlers(), elicitation_complete=complete)
    async with Registry(handlers=handlers) as registry:
        await registry.mount("a", asking(protocol=era))
        with anyio.fail_after(BEHAVIOUR):
            visited = await registry.call("a__elicit_url", {"url": "https://example.com/x"})
            if era == "legacy":
                await done.wait()
    assert text_of(visited) == "user action: accept"
    assert completed == ([("a", "visit-1")] if era == "legacy" else [])
