"""Every question reaches the client of the request that asked it, even with other
requests to the same server in flight.

`mcpmount serve` in front of tests/servers/asking_server.py served over streamable HTTP:
in the handshake era the server sends its question on the SSE stream of the POST that
caused it, in the 2026-07-28 era inside that request's result. Three downstream Clients
overlap a tool call, a prompt get and a read, each answering with its own name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from asking_support import fresh_asking_server, prompt_text, read_text
from http_fixture import serve_http
from serve.relay_support import ERAS
from serve.serve_support import BEHAVIOUR, connected, served_http, wait_for_tool
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


class Person:
    """A downstream user who answers every question with their own name, once let go."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[str] = []
        self.was_asked = anyio.Event()
        self.go = anyio.Event()

    async def _note(self, question: str) -> None:
        self.asked.append(question)
        self.was_asked.set()
        await self.go.wait()

    async def sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        prompt = params.messages[0].content
        await self._note(prompt.text if isinstance(prompt, mcp_types.TextContent) else "?")
        reply = mcp_types.TextContent(type="text", text=self.name)
        return mcp_types.CreateMessageResult(role="assistant", content=reply, model=self.name)

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        await self._note(params.message)
        return mcp_types.ElicitResult(action="accept", content={"answer": self.name})

    def client(self, url: str, mode: str) -> Client:
        return Client(
            url, mode=mode, sampling_callback=self.sample, elicitation_callback=self.elicit
        )


@pytest.mark.parametrize("upstream", ["legacy", "auto"])
@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_each_question_reaches_the_client_whose_request_asked_it(
    tmp_path: Path, upstream: str, mode: str, version: str
) -> None:
    """A call asks; while its question is open a prompt get and then a read to the same
    server ask too: each question reaches its own client, each answer its own request."""
    people = [Person("ann"), Person("bob"), Person("cy")]
    got: dict[str, str] = {}
    async with serve_http(fresh_asking_server().streamable_http_app()) as upstream_url:
        config = tmp_path / "serve.toml"
        config.write_text(
            "[registry]\nstartup_timeout = 15\n\n"
            f'[servers.ask]\nurl = "{upstream_url}"\nprotocol = "{upstream}"\n'
        )
        async with (
            served_http(str(config), tmp_path) as (url, _),
            connected(people[0].client(url, mode)) as ann,
            connected(people[1].client(url, mode)) as bob,
            connected(people[2].client(url, mode)) as cy,
        ):
            await wait_for_tool(ann, "ask__sample")
            assert ann.protocol_version == version

            async def sample() -> str:
                return text_of(await ann.call_tool("ask__sample", {"prompt": "ann's call"}))

            async def interview() -> str:
                return prompt_text(await bob.get_prompt("ask__interview", {"topic": "bob"}))

            async def read() -> str:
                return read_text(await cy.read_resource("mcpmount://ask/asked://cy"))

            async def run(name: str, request: Callable[[], Awaitable[str]]) -> None:
                got[name] = await request()

            with anyio.fail_after(BEHAVIOUR):
                async with anyio.create_task_group() as tg:
                    for person, request in zip(people, [sample, interview, read], strict=True):
                        tg.start_soon(run, person.name, request)
                        await person.was_asked.wait()  # its question is open: start the next
                    for person in reversed(people):
                        person.go.set()
    assert [person.asked for person in people] == [["ann's call"], ["why bob?"], ["why cy?"]]
    assert got == {
        "ann": "model said: ann",
        "bob": "user answered: bob",
        "cy": "user answered: cy",
    }
