"""Helpers for tests of what upstream servers ask: the asking server and recording handlers."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from mcp.server.mcpserver import MCPServer

from mcpmount.config import StdioServer
from mcpmount.handlers import Asker, ClientHandlers
from support import SERVERS, stdio_spec

ASKING = str(SERVERS / "asking_server.py")


def asking(**options: Any) -> StdioServer:
    """A stdio spec for the asking server."""
    return stdio_spec(ASKING, **options)


@dataclass
class Recorder:
    """Handlers that answer like a cooperative host and record who asked what."""

    asked: list[tuple[str, str, str | None, object | None]] = field(
        default_factory=list[tuple[str, str, str | None, object | None]]
    )

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(sampling=self.sample, elicitation=self.elicit, roots=self.roots)

    def _note(self, what: str, asker: Asker) -> None:
        self.asked.append((what, asker.server, asker.tool, asker.context))

    async def sample(
        self, asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        self._note("sampling", asker)
        prompt = params.messages[0].content
        text = prompt.text if isinstance(prompt, mcp_types.TextContent) else "?"
        content = mcp_types.TextContent(type="text", text=f"echo {text}")
        return mcp_types.CreateMessageResult(role="assistant", content=content, model="test")

    async def elicit(
        self, asker: Asker, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            self._note("elicitation:url", asker)
            return mcp_types.ElicitResult(action="accept")
        self._note("elicitation:form", asker)
        return mcp_types.ElicitResult(action="accept", content={"answer": "because"})

    async def roots(self, asker: Asker) -> mcp_types.ListRootsResult:
        self._note("roots", asker)
        root = mcp_types.Root(uri="file:///work/project", name="project")  # pyright: ignore[reportArgumentType]
        return mcp_types.ListRootsResult(roots=[root])


def prompt_text(result: mcp_types.GetPromptResult) -> str:
    """The text of a prompt's first message."""
    content = result.messages[0].content
    assert isinstance(content, mcp_types.TextContent)
    return content.text


def read_text(result: mcp_types.ReadResourceResult) -> str:
    """The text of a read's first contents."""
    contents = result.contents[0]
    assert isinstance(contents, mcp_types.TextResourceContents)
    return contents.text


BEHAVIOUR = 20.0
"""Seconds for what a test checks once its servers are up, on a loaded machine."""


def fresh_asking_server() -> MCPServer:
    """A new in-process asking server (its own module, so its own counters), for HTTP."""
    spec = importlib.util.spec_from_file_location(f"asking_server_{uuid.uuid4().hex}", ASKING)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves a prompt's annotations through it
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    server: MCPServer = module.server
    return server
