"""The client side of MCP: what an upstream server asks is answered by the host's handlers,
offered only when given, told who asks, and never able to break the connection."""

from __future__ import annotations

from typing import Literal

import pytest

from asking_support import Recorder, asking
from mcpmount.config import RegistryConfig, RegistrySettings
from mcpmount.errors import UpstreamError
from mcpmount.handlers import ClientHandlers
from mcpmount.registry import Registry, open_registry
from support import text_of

pytestmark = pytest.mark.usefixtures("no_leaks")

Era = Literal["auto", "legacy"]
ERAS: list[Era] = ["auto", "legacy"]


@pytest.mark.parametrize("era", ERAS)
async def test_each_handler_answers_its_request_and_is_told_the_tool_and_context(era: Era) -> None:
    """Sampling, form and URL elicitation and roots reach the handlers, attributed."""
    recorder = Recorder()
    async with Registry(handlers=recorder.handlers()) as registry:
        await registry.mount("a", asking(protocol=era))
        sampled = await registry.call("a__sample", {"prompt": "hi"}, context="turn-1")
        elicited = await registry.call("a__elicit", {"question": "why?"}, context="turn-2")
        visited = await registry.call("a__elicit_url", {"url": "https://example.com/x"})
        rooted = await registry.call("a__roots", {}, context=("turn", 4))
    assert text_of(sampled) == "model said: echo hi"
    assert text_of(elicited) == "user answered: because"
    assert text_of(visited) == "user action: accept"
    assert text_of(rooted) == "roots: file:///work/project"
    assert recorder.asked == [
        ("sampling", "a", "a__sample", "turn-1"),
        ("elicitation:form", "a", "a__elicit", "turn-2"),
        ("elicitation:url", "a", "a__elicit_url", None),
        ("roots", "a", "a__roots", ("turn", 4)),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_without_handlers_nothing_is_offered_and_the_server_cannot_ask(era: Era) -> None:
    """No handler: the server sees no capability; its asking tools fail, the rest work."""
    config = RegistryConfig(RegistrySettings(), {"a": asking(protocol=era)})
    async with open_registry(config) as registry:
        for tool, arguments in [("a__sample", {"prompt": "x"}), ("a__roots", {})]:
            with pytest.raises(UpstreamError, match="capability"):
                await registry.call(tool, arguments)
        with pytest.raises(UpstreamError, match="did not declare the form elicitation"):
            await registry.call("a__elicit", {"question": "q"})
        assert text_of(await registry.call("a__read_thing", {"name": "n"})) == "read n"


@pytest.mark.parametrize("era", ERAS)
async def test_only_the_capabilities_with_a_handler_are_offered(era: Era) -> None:
    """A roots handler alone offers roots, not sampling."""
    recorder = Recorder()
    handlers = ClientHandlers(roots=recorder.handlers().roots)
    async with Registry(handlers=handlers) as registry:
        await registry.mount("a", asking(protocol=era))
        assert "file:///work/project" in text_of(await registry.call("a__roots", {}))
        with pytest.raises(UpstreamError, match="sampling capability"):
            await registry.call("a__sample", {"prompt": "x"})
