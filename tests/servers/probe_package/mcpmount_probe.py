"""A stdio MCP server of the standard library alone: ``read(path)`` and ``write(path)``.

Installed by the sandbox tests the way users install servers (``pipx install``, ``uv tool
install``, a script in ``~/bin``), so it must import nothing but the standard library: in
a sandbox it sees its own install and nothing of the user's. It speaks the handshake era
(``initialize``) and answers any other request with "method not found", as an old server
does. Every tool answer starts with ``ok:`` or ``failed:``.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return "ok: " + f.read()
    except OSError as exc:
        return f"failed: {type(exc).__name__}: {exc}"


def _write(path: str) -> str:
    try:
        with open(path, "w") as f:
            f.write("written")
    except OSError as exc:
        return f"failed: {type(exc).__name__}: {exc}"
    return "ok: written"


_TOOLS = {"read": _read, "write": _write}


def _answer(method: str, params: dict[str, Any]) -> dict[str, object] | None:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcpmount-probe", "version": "1.0.0"},
        }
    if method == "tools/list":
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return {"tools": [{"name": name, "inputSchema": schema} for name in _TOOLS]}
    if method == "tools/call":
        arguments: dict[str, Any] = params.get("arguments") or {}
        text = _TOOLS[str(params.get("name"))](str(arguments.get("path", "")))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    """Answer JSON-RPC requests, one per line, until stdin closes."""
    for line in sys.stdin:
        message: dict[str, Any] = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or a response
        result = _answer(message["method"], message.get("params") or {})
        if result is None:
            reply = {"code": -32601, "message": f"method not found: {message['method']}"}
            out = {"jsonrpc": "2.0", "id": message["id"], "error": reply}
        else:
            out = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
