"""Requests the SDK cannot parse, turned into requests it can answer with an error.

The SDK's stdio server drops a line its JSON parser refuses, and the client waits for an
answer forever. A request holding a lone surrogate escape (``"\\ud800"``, which is not
Unicode) is such a line, yet Python's own JSON reader can read its id. `screen` rewrites
such a request into a call of `UNREADABLE_METHOD`, with the same id, whose handler
(`refuse_unreadable`) answers with an error that says what was wrong. (``NaN`` the SDK
parses; the registry then refuses the arguments.) Only lines holding a surrogate escape
pay for the check.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import mcp_types
import pydantic
from mcp import MCPError
from mcp.server import ServerRequestContext

__all__ = ["UNREADABLE_METHOD", "Unreadable", "refuse_unreadable", "screen"]

UNREADABLE_METHOD: Final = "mcpmount/unreadable"
"""The method an unreadable request is rewritten to; its params say what was wrong."""

_SUSPECT = re.compile(r"\\u[dD][89a-fA-F]")


def screen(line: str) -> str:
    """Return ``line``, or, for a request only the lenient reader can parse, the rewrite."""
    if _SUSPECT.search(line) is None:
        return line
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except pydantic.ValidationError:
        pass
    else:
        return line
    try:
        message: object = json.loads(line)
    except ValueError:
        return line  # unreadable by any reader: the SDK reports it
    if not isinstance(message, dict):
        return line
    fields: dict[str, object] = message  # pyright: ignore[reportUnknownVariableType]
    request_id, method = fields.get("id"), fields.get("method")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return line  # a notification or an answer: nobody waits for a reply
    problem = "it holds a lone surrogate escape (such as \\ud800), which is not valid Unicode"
    rewritten = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": UNREADABLE_METHOD,
        "params": {"method": method if isinstance(method, str) else "?", "problem": problem},
    }
    return json.dumps(rewritten) + "\n"


class Unreadable(mcp_types.RequestParams):
    """The params of a rewritten request: what it named and why it could not be read."""

    method: str
    """The method the unreadable request named."""
    problem: str


async def refuse_unreadable(
    ctx: ServerRequestContext[Any, Any], params: Unreadable
) -> mcp_types.EmptyResult:
    """Answer a request the SDK could not parse with an error that says why."""
    message = f"{params.method}: the request cannot be read: {params.problem}; nothing was sent"
    raise MCPError(mcp_types.INVALID_PARAMS, message)
