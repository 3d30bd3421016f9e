"""MCP Apps through `mcpmount serve`, as the SDK's Client sees them, in both protocol eras.

Two instances of tests/apps/app_server.py (``alpha`` and ``beta``) list the same view URIs;
serve publishes each server's ``ui://rest`` as ``ui://<namespace>/rest``, in its resource
lists and in every tool ``_meta`` that names it (``ui.resourceUri``, ``ui/resourceUri``,
``openai/outputTemplate``), and reads each back from its own server. An app-only tool is
left out of the list, as a host leaves it out of what its model sees, and an app reaches its
server's tools by the names it knows, unless two servers' apps know the same one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from apps_support import app_server
from mcp import Client, MCPError

from serve.serve_support import (
    BEHAVIOUR,
    connected,
    served_http,
    served_stdio,
    wait_for_tool,
    write_config,
)
from support import fixture_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
"""Each downstream era as a client reaches it: ``auto`` discovers 2026-07-28."""
EVERY_WAY = [(transport, *era) for transport in ("stdio", "http") for era in ERAS]
VIEW = "text/html;profile=mcp-app"


@asynccontextmanager
async def served(config: str, tmp_path: Path, transport: str, mode: str) -> AsyncGenerator[Client]:
    """A Client of `mcpmount serve CONFIG` over ``transport``, in the era ``mode`` reaches."""
    if transport == "stdio":
        async with served_stdio(config, tmp_path, mode=mode) as client:
            yield client
        return
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode=mode)) as client,
    ):
        yield client


def only_text(result: mcp_types.ReadResourceResult | mcp_types.CallToolResult) -> str:
    """The one text a read or a call answered."""
    items: list[Any] = list(
        result.contents if isinstance(result, mcp_types.ReadResourceResult) else result.content
    )
    assert len(items) == 1, items
    return items[0].text


async def refusal(client: Client, name: str) -> str:
    """What serve answers a call of ``name`` it refuses (an error, or an error result)."""
    try:
        result = await client.call_tool(name, {})
    except MCPError as exc:
        return exc.message
    assert result.is_error, result
    return only_text(result)


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_views_are_listed_and_read_under_the_uris_their_tools_name(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """Each server's view is listed, named by its tools and read back under
    ``ui://<namespace>/...``: two servers with the same view URI never cross."""
    config = write_config(tmp_path, app_server("alpha", "alpha"), app_server("beta", "beta"))
    async with served(config, tmp_path, transport, mode) as client:
        await wait_for_tool(client, "alpha__show")
        await wait_for_tool(client, "beta__show")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            listed = sorted(str(r.uri) for r in (await client.list_resources()).resources)
            templates = (await client.list_resource_templates()).resource_templates
            reads = {
                ns: await client.read_resource(f"ui://{ns}/shared/app.html")
                for ns in ("alpha", "beta")
            }
            card = await client.read_resource("ui://alpha/widget/card.html")
            page = await client.read_resource("ui://beta/pages/intro")
            shown = await client.call_tool("beta__show", {})
            with pytest.raises(MCPError, match=r"ui://shared/app\.html"):
                await client.read_resource("ui://shared/app.html")  # the server's own URI
    assert listed == [
        "ui://alpha/shared/app.html",
        "ui://alpha/widget/card.html",
        "ui://beta/shared/app.html",
        "ui://beta/widget/card.html",
    ]
    assert sorted(t.uri_template for t in templates) == [
        "ui://alpha/pages/{page}",
        "ui://beta/pages/{page}",
    ]
    for ns, read in reads.items():
        meta = tools[f"{ns}__show"].meta or {}
        assert meta["ui"] == {"resourceUri": f"ui://{ns}/shared/app.html"}
        assert meta["ui/resourceUri"] == f"ui://{ns}/shared/app.html"
        card_meta = tools[f"{ns}__card"].meta or {}
        assert card_meta["openai/outputTemplate"] == f"ui://{ns}/widget/card.html"
        assert [(c.uri, c.mime_type) for c in read.contents] == [
            (f"ui://{ns}/shared/app.html", VIEW)
        ]
        assert only_text(read) == f"<!doctype html><html><body>app of {ns}</body></html>"
    assert "alpha__refresh" not in tools  # app only: hidden from the model
    assert "alpha__private" not in tools  # the same, the OpenAI Apps SDK's way
    assert (tools["alpha__model_only"].meta or {})["ui"]["visibility"] == ["model"]
    assert [(c.uri, c.mime_type) for c in card.contents] == [
        ("ui://alpha/widget/card.html", "text/html+skybridge")
    ]
    assert "card of alpha" in only_text(card)
    assert "page intro of beta" in only_text(page)
    assert only_text(shown) == "show by beta"
    assert (shown.meta or {})["ui"] == {"resourceUri": "ui://beta/shared/app.html"}


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_an_app_reaches_its_servers_tools_by_the_names_it_knows(
    tmp_path: Path, mode: str, version: str
) -> None:
    """A raw name an app calls reaches its server (the app-only tool too); a model-only
    tool's, or that of a server without a view, is no name."""
    config = write_config(tmp_path, app_server("alpha", "alpha"), fixture_server("plain"))
    async with served(config, tmp_path, "http", mode) as client:
        await wait_for_tool(client, "alpha__show")
        await wait_for_tool(client, "plain__echo")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            refreshed = await client.call_tool("refresh", {})
            private = await client.call_tool("private", {})
            shown = await client.call_tool("show", {})
            public = await client.call_tool("alpha__refresh", {})
            model_only = await refusal(client, "model_only")
            plain = await refusal(client, "echo")
    assert only_text(refreshed) == only_text(public) == "refresh by alpha"
    assert only_text(shown) == "show by alpha"
    assert only_text(private) == "private by alpha"
    assert "no mounted tool is named 'model_only'" in model_only
    assert "no mounted tool is named 'echo'" in plain


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_name_two_apps_know_reaches_neither_and_their_public_names_each(
    tmp_path: Path, mode: str, version: str
) -> None:
    """``refresh``, known to the apps of both servers, is refused naming both public names;
    each public name reaches its own server, and a name one app alone knows its server."""
    alpha = app_server("alpha", "alpha", "--extra", "alpha_only")
    config = write_config(tmp_path, alpha, app_server("beta", "beta"))
    async with served(config, tmp_path, "http", mode) as client:
        await wait_for_tool(client, "alpha__show")
        await wait_for_tool(client, "beta__show")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            both = await refusal(client, "refresh")
            alpha = await client.call_tool("alpha__refresh", {})
            beta = await client.call_tool("beta__refresh", {})
            alone = await client.call_tool("alpha_only", {})
    assert "alpha__refresh, beta__refresh" in both
    assert only_text(alpha) == "refresh by alpha"
    assert only_text(beta) == "refresh by beta"
    assert only_text(alone) == "alpha_only by alpha"


async def test_a_server_is_told_its_client_renders_apps_in_both_eras(tmp_path: Path) -> None:
    """The registry advertises MCP Apps to every server it mounts, in the 2026-07-28 era
    (``alpha``) and the handshake era (``beta``), so one that checks offers its apps."""
    legacy = app_server("beta", "beta") + 'protocol = "legacy"\n'
    config = write_config(tmp_path, app_server("alpha", "alpha"), legacy)
    async with served(config, tmp_path, "http", "legacy") as client:
        await wait_for_tool(client, "alpha__supports")
        await wait_for_tool(client, "beta__supports")
        with anyio.fail_after(BEHAVIOUR):
            told = [
                only_text(await client.call_tool(f"{ns}__supports", {})) for ns in ("alpha", "beta")
            ]
    assert told == ["True", "True"]
