"""Prompts, resources, templates, completions and subscriptions through `mcpmount serve`.

`mcpmount serve` in front of tests/servers/content_server.py, over stdio and HTTP, in both
eras: names and registry URIs (``mcpmount://<ns>/<uri>``) route back to the server, a
``resource_link`` a tool returned reads back, a resource that does not exist is answered
as the client's era says, list changes and resource updates reach the client
(handshake-era notices, or the 2026-07-28 listen stream).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated

from serve.relay_support import EVERY_WAY, served
from serve.serve_support import BEHAVIOUR, wait_for_tool, write_config
from support import SERVERS, script_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

ONE = "mcpmount://docs/memo://one"


def content(name: str) -> str:
    """The content server (prompts, resources, a template), mounted as ``name``."""
    return script_server(name, str(SERVERS / "content_server.py"))


def texts(result: mcp_types.ReadResourceResult) -> list[str]:
    return [c.text for c in result.contents if isinstance(c, mcp_types.TextResourceContents)]


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_prompts_resources_templates_and_completions_route_to_their_server(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """Everything is listed under registry names and URIs, and each reads back."""
    config = write_config(tmp_path, content("docs"))
    async with served(config, tmp_path, transport, mode) as client:
        await wait_for_tool(client, "docs__link")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            prompts = await client.list_prompts()
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            prompt = await client.get_prompt("docs__greet", {"name": "Ada", "style": "loud"})
            read = await client.read_resource(ONE)
            item = await client.read_resource("mcpmount://docs/memo://items/pear")
            linked = await client.call_tool("docs__link", {})
            completed = await client.complete(
                mcp_types.PromptReference(type="ref/prompt", name="docs__greet"),
                {"name": "name", "value": "b"},
            )
            with pytest.raises(MCPError) as unknown:
                await client.read_resource("mcpmount://nobody/memo://one")
            with pytest.raises(MCPError) as gone:  # the server answers -32002
                await client.read_resource("mcpmount://docs/memo://gone")
    assert [p.name for p in prompts.prompts] == ["docs__greet"]
    assert sorted(str(r.uri) for r in resources.resources) == [
        "mcpmount://docs/file:///shared.txt",
        ONE,
    ]
    assert [t.uri_template for t in templates.resource_templates] == [
        "mcpmount://docs/memo://items/{item}"
    ]
    first = prompt.messages[0].content
    assert isinstance(first, mcp_types.TextContent)
    assert first.text == "Hello, Ada!"
    assert texts(read) == ["one"]
    assert texts(item) == ["item:pear"]
    [link] = [b for b in linked.content if isinstance(b, mcp_types.ResourceLink)]
    assert str(link.uri) == ONE  # a URI a tool returned is one serve can read
    assert completed.completion.values == ["bob"]
    # Not found: -32602 in the 2026-07-28 era (SEP-2164 retired -32002), -32002 before it;
    # a handshake-era server's -32002 is told in the client's era too.
    not_found = mcp_types.INVALID_PARAMS if version == "2026-07-28" else -32002
    assert (unknown.value.code, gone.value.code) == (not_found, not_found)
    assert unknown.value.error.data == {"uri": "mcpmount://nobody/memo://one"}
    assert gone.value.error.data == {"server": "docs", "name": "mcpmount://docs/memo://gone"}


async def test_a_handshake_era_subscriber_gets_updates_and_list_changes(tmp_path: Path) -> None:
    """resources/subscribe reaches the server; its updates and list changes come back."""
    config = write_config(tmp_path, content("docs"))
    updated = anyio.Event()
    changed = anyio.Event()
    seen: list[str] = []

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            updated.set()
        if isinstance(message, mcp_types.PromptListChangedNotification):
            changed.set()

    async with served(config, tmp_path, "http", "legacy", message_handler=on_message) as client:
        await wait_for_tool(client, "docs__touch")
        with anyio.fail_after(BEHAVIOUR):
            # Not Client.subscribe_resource: it warns of the 2026-07-28 deprecation.
            params = mcp_types.SubscribeRequestParams(uri=ONE)
            subscribe = mcp_types.SubscribeRequest(params=params)
            await client.session.send_request(subscribe, mcp_types.EmptyResult)
            # A URI no server owns is taken, as a plain server takes it, and let go.
            nobody = mcp_types.SubscribeRequestParams(uri="test://nobody")
            await client.session.send_request(
                mcp_types.SubscribeRequest(params=nobody), mcp_types.EmptyResult
            )
            unsubscribe = mcp_types.UnsubscribeRequestParams(uri="test://nobody")
            await client.session.send_request(
                mcp_types.UnsubscribeRequest(params=unsubscribe), mcp_types.EmptyResult
            )
            await client.call_tool("docs__touch", {"uri": "memo://one"})
            await updated.wait()
            await client.call_tool("docs__add_prompt", {"name": "later"})
            await changed.wait()
            while "docs__later" not in [p.name for p in (await client.list_prompts()).prompts]:
                await anyio.sleep(0.05)
    assert seen == [ONE]


async def test_a_2026_listener_gets_updates_and_list_changes(tmp_path: Path) -> None:
    """A listen stream naming a registry URI subscribes upstream; updates come back."""
    config = write_config(tmp_path, content("docs"))
    async with served(config, tmp_path, "stdio", "auto") as client:
        await wait_for_tool(client, "docs__touch")
        assert client.protocol_version == "2026-07-28"
        with anyio.fail_after(BEHAVIOUR):
            async with client.listen(
                prompts_list_changed=True, resource_subscriptions=[ONE]
            ) as events:
                await client.call_tool("docs__touch", {"uri": "memo://one"})
                event = await anext(aiter(events))
                assert event == ResourceUpdated(uri=ONE)
                await client.call_tool("docs__add_prompt", {"name": "later"})
                async for event in events:
                    if event == PromptsListChanged():
                        break
            listed = await client.list_prompts()
    assert "docs__later" in [p.name for p in listed.prompts]
