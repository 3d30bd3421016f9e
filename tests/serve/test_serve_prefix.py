"""``prefix = false``: `mcpmount serve` fronts a server transparently.

tests/servers/content_server.py mounted with ``prefix = false``: a client of serve sees
exactly the names and URIs the server's own client sees, and every call, prompt and read
routes back (a template-expanded URI and a ``resource_link`` a tool returned included).
A later server that would publish a name or URI already taken is refused, naming both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from serve.relay_support import EVERY_WAY, served
from serve.serve_support import BEHAVIOUR, STARTUP, names, wait_for_tool, write_config
from support import SERVERS, script_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

CONTENT = str(SERVERS / "content_server.py")


def unprefixed(name: str, *flags: str) -> str:
    """The content server mounted as ``name`` with ``prefix = false``."""
    return script_server(name, CONTENT, *flags, extra="prefix = false")


def texts(result: mcp_types.ReadResourceResult) -> list[str]:
    return [c.text for c in result.contents if isinstance(c, mcp_types.TextResourceContents)]


async def lists_of(client: Client) -> tuple[list[str], list[str], list[str], list[str]]:
    """Tool names, prompt names, resource URIs and URI templates, each sorted."""
    return (
        sorted(names(await client.list_tools())),
        sorted(p.name for p in (await client.list_prompts()).prompts),
        sorted(str(r.uri) for r in (await client.list_resources()).resources),
        sorted(t.uri_template for t in (await client.list_resource_templates()).resource_templates),
    )


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_an_unprefixed_server_is_served_under_its_own_names_and_uris(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """serve lists what the server lists, under the same names and URIs, and routes each
    call, prompt and read back to it."""
    params = StdioServerParameters(command=sys.executable, args=[CONTENT])
    with (tmp_path / "direct.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as direct:
            with anyio.fail_after(STARTUP):
                expected = await lists_of(direct)
    config = write_config(tmp_path, unprefixed("docs"))
    async with served(config, tmp_path, transport, mode) as client:
        await wait_for_tool(client, "link")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            seen = await lists_of(client)
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            read = await client.read_resource("memo://one")
            item = await client.read_resource("memo://items/pear")
            linked = await client.call_tool("link", {})
    assert seen == expected
    assert "link" in seen[0]
    assert seen[1] == ["greet"]
    assert "memo://one" in seen[2]
    assert seen[3] == ["memo://items/{item}"]
    first = prompt.messages[0].content
    assert isinstance(first, mcp_types.TextContent)
    assert first.text == "Hello, Ada."
    assert texts(read) == ["one"]
    assert [c.uri for c in read.contents] == ["memo://one"]
    assert texts(item) == ["item:pear"]
    [link] = [b for b in linked.content if isinstance(b, mcp_types.ResourceLink)]
    assert str(link.uri) == "memo://one"  # the server's own URI, readable through serve


async def test_a_later_server_with_a_name_already_taken_is_refused_naming_both(
    tmp_path: Path,
) -> None:
    """A second unprefixed copy of the server, added by a reload, would publish the same
    names and URIs: it is refused as a whole, the error names both servers, and the first
    keeps serving unchanged."""
    config = write_config(tmp_path, unprefixed("docs"))
    async with served(config, tmp_path, "http", "auto") as client:
        await wait_for_tool(client, "link")
        before = await lists_of(client)
        file = anyio.Path(config)
        await file.write_text(await file.read_text() + "\n" + unprefixed("more"))
        log = tmp_path / "serve.log"
        with anyio.fail_after(STARTUP):
            while "'more'" not in log.read_text():
                await anyio.sleep(0.1)
        with anyio.fail_after(BEHAVIOUR):
            after = await lists_of(client)
            called = await client.call_tool("link", {})
    told = " ".join(log.read_text().split())  # the log wraps long lines
    refusal = told[told.index("server 'more' failed to mount") :]
    assert "which server 'docs' already uses" in refusal, refusal
    assert after == before
    assert not called.is_error
