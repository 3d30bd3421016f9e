"""What a streamable HTTP POST's body says about the JSON-RPC request it holds."""

from __future__ import annotations

import json
from typing import cast


def request_id(body: bytes | bytearray) -> str | int | None:
    """The id of the one JSON-RPC request ``body`` holds; None for anything else (a
    notification, a response, a batch, or not JSON)."""
    try:
        message: object = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    found: object = cast("dict[str, object]", message).get("id")
    if isinstance(found, str | int) and not isinstance(found, bool):
        return found
    return None
