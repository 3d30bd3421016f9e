"""MCP Apps through `mcpmount serve --tokens-file`: an app of a hidden server is not there.

``alpha`` and ``vault`` both run tests/apps/app_server.py (so their apps both know
``refresh``), and ``vault``'s app alone knows ``vault_only``. A token limited to ``alpha``
sees neither ``vault``'s views nor its tools, and the raw names its apps know are resolved
among ``alpha``'s only: ``refresh`` reaches ``alpha`` (to a token that sees both it is
ambiguous), and ``vault_only`` or a view of ``vault`` is answered exactly as a name of a
namespace that is not mounted (``qzxjw``, as long), while the full token reaches them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from apps_support import app_server
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from serve.serve_support import BEHAVIOUR, connected, served_http, wait_for_tool, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FULL = "full-token-0123456789abcdef"
LIMITED = "limited-token-0123456789abcdef"
ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]


@asynccontextmanager
async def client_of(url: str, token: str, mode: str) -> AsyncGenerator[Client]:
    """A Client of serve at ``url`` with ``token``."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=BEHAVIOUR) as http:
        client = Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)
        async with connected(client):
            yield client


async def answer(client: Client, name: str) -> str:
    """What a call of ``name`` is answered: its text, or its error (code and message)."""
    try:
        result = await client.call_tool(name, {})
    except MCPError as exc:
        return f"error {exc.code}: {exc.message}"
    texts = [getattr(block, "text", "") for block in result.content]
    return ("error result: " if result.is_error else "") + " ".join(texts)


async def read(client: Client, uri: str) -> str:
    """What a read of ``uri`` is answered: its text, or its error (code and message)."""
    try:
        result = await client.read_resource(uri)
    except MCPError as exc:
        return f"error {exc.code}: {exc.message}"
    return " ".join(getattr(content, "text", "") for content in result.contents)


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_an_app_of_a_hidden_server_is_answered_as_nothing_mounted(
    tmp_path: Path, mode: str, version: str
) -> None:
    """The limited token's ``refresh`` reaches ``alpha``; ``vault_only`` and ``vault``'s view
    are answered as ``qzxjw``'s; the full token reaches ``vault``'s and finds ``refresh``
    ambiguous."""
    vault = app_server("vault", "vault", "--extra", "vault_only")
    config = write_config(tmp_path, app_server("alpha", "alpha"), vault)
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{FULL}\n{LIMITED} alpha\n")
    async with (
        served_http(config, tmp_path, "--tokens-file", str(tokens)) as (url, _),
        client_of(url, FULL, mode) as full,
        client_of(url, LIMITED, mode) as limited,
    ):
        await wait_for_tool(full, "alpha__show")
        await wait_for_tool(full, "vault__show")
        assert limited.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            listed = sorted(tool.name for tool in (await limited.list_tools()).tools)
            views = sorted(str(r.uri) for r in (await limited.list_resources()).resources)
            limited_refresh = await answer(limited, "refresh")
            hidden_call = await answer(limited, "vault_only")
            nowhere_call = await answer(limited, "qzxjw_only")
            hidden_view = await read(limited, "ui://vault/shared/app.html")
            nowhere_view = await read(limited, "ui://qzxjw/shared/app.html")
            full_refresh = await answer(full, "refresh")
            full_call = await answer(full, "vault_only")
            full_view = await read(full, "ui://vault/shared/app.html")
    assert listed == ["alpha__card", "alpha__model_only", "alpha__show", "alpha__supports"]
    assert views == ["ui://alpha/shared/app.html", "ui://alpha/widget/card.html"]
    assert limited_refresh == "refresh by alpha"
    assert hidden_call.replace("vault", "qzxjw") == nowhere_call
    assert hidden_view.replace("vault", "qzxjw") == nowhere_view
    assert "error" in nowhere_call
    assert "error" in nowhere_view
    assert "alpha__refresh, vault__refresh" in full_refresh
    assert full_call == "vault_only by vault"
    assert "app of vault" in full_view
