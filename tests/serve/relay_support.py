"""A downstream host for the relay tests: the SDK Client's callbacks, answering and recording.

`Host` plays the client in front of `mcpmount serve`: it answers sampling, elicitation
(form and URL) and roots like a cooperative user would, and records what it was asked,
so a test sees both what reached the client and what the upstream server got back.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client import ClientRequestContext

from serve.serve_support import connected, served_http, served_stdio

ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
"""Each downstream era as a client reaches it: ``auto`` discovers 2026-07-28."""

EVERY_WAY = [(transport, *era) for transport in ("stdio", "http") for era in ERAS]
"""(transport, mode, version): each transport in each era."""


@dataclass
class Host:
    """A cooperative downstream client; ``approve`` says how it answers a plain form."""

    approve: bool = True
    asked: list[str] = field(default_factory=list[str])
    messages: list[str] = field(default_factory=list[str])
    """The text of every elicitation message, in order."""
    logs: list[mcp_types.LoggingMessageNotificationParams] = field(
        default_factory=list[mcp_types.LoggingMessageNotificationParams]
    )
    completed: list[str] = field(default_factory=list[str])
    """The id of every URL elicitation the client was told is complete, in order."""
    told_complete: anyio.Event = field(default_factory=anyio.Event)

    def callbacks(self) -> dict[str, Any]:
        """Every client callback: the client offers sampling, elicitation and roots."""
        return {
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.roots,
            "logging_callback": self.log,
        }

    async def sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        self.asked.append("sampling")
        words = [
            m.content.text for m in params.messages if isinstance(m.content, mcp_types.TextContent)
        ]
        reply = mcp_types.TextContent(type="text", text=" ".join(["echo", *words]))
        return mcp_types.CreateMessageResult(role="assistant", content=reply, model="host")

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.messages.append(params.message)
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            self.asked.append(f"elicitation:url:{params.url}")
            return mcp_types.ElicitResult(action="accept")
        self.asked.append("elicitation:form")
        if not params.requested_schema.get("properties"):  # a yes/no question: approval
            return mcp_types.ElicitResult(action="accept" if self.approve else "decline")
        return mcp_types.ElicitResult(action="accept", content={"answer": "because"})

    async def roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        self.asked.append("roots")
        root = mcp_types.Root(uri="file:///work/project", name="project")  # pyright: ignore[reportArgumentType]
        return mcp_types.ListRootsResult(roots=[root])

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def on_message(self, message: object) -> None:
        """For `served`'s ``on_message``: notes the completion notices."""
        if isinstance(message, mcp_types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)
            self.told_complete.set()


@asynccontextmanager
async def served(
    config: str,
    tmp_path: Path,
    transport: str,
    mode: str,
    on_message: Callable[[object], None] | None = None,
    **options: Any,
) -> AsyncGenerator[Client]:
    """A Client (with ``options``) connected to `mcpmount serve CONFIG` over ``transport``;
    ``on_message`` gets what reaches the Client's message handler."""
    if transport == "stdio":
        async with served_stdio(
            config, tmp_path, mode=mode, on_message=on_message, **options
        ) as client:
            yield client
        return

    if on_message is not None:
        note = on_message

        async def message_handler(message: object) -> None:
            note(message)

        options["message_handler"] = message_handler
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url, mode=mode, **options)) as client,
    ):
        yield client
