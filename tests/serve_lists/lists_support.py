"""Helpers for the lists tests: configs with deferred and slow servers, and Clients that name
their conversation (the ``Mcp-Conversation-Id`` header) over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import httpx2
import mcp_types
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

from mcpmount.serve import CONVERSATION_HEADER
from serve.serve_support import connected


def config_with(tmp_path: Path, *servers: str, registry: str = "") -> str:
    """Write a config of ``servers`` with extra ``[registry]`` lines; return its path."""
    path = tmp_path / "lists.toml"
    path.write_text("[registry]\nstartup_timeout = 40\n" + registry + "\n\n" + "\n".join(servers))
    return str(path)


@asynccontextmanager
async def client_of(
    url: str,
    *,
    mode: str = "auto",
    conversation: str | None = None,
    message_handler: MessageHandlerFnT | None = None,
) -> AsyncGenerator[Client]:
    """A connected Client of ``url``; with ``conversation``, every request names it."""
    headers = {CONVERSATION_HEADER: conversation} if conversation is not None else {}
    timeout = httpx2.Timeout(30, read=300)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(url, http_client=http)
        client = Client(transport, mode=mode, message_handler=message_handler)
        async with connected(client):
            yield client


def payload(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """The structured content of a result, which must have some."""
    assert result.structured_content is not None, result
    return cast("dict[str, Any]", result.structured_content)
