"""Helpers for the ``[serve.limits]`` tests: a config with rules, two tokens, and what a
refused call carries.

Every test runs a real `mcpmount serve --transport http` (tests/serve/serve_support.py)
in front of the fixture server (its ``echo`` and ``sleep`` tools), with two static
tokens given by ``--token-env``: their principals are named after the variables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, cast

import mcp_types
import pytest
from mcp import Client

from support import fixture_server

__all__ = [
    "ALICE",
    "BOB",
    "TOKEN_FLAGS",
    "allowed",
    "limit_of",
    "limited_config",
    "set_tokens",
]

ALICE: Final = "alice-token-0123456789abcdef"
BOB: Final = "bob-token-0123456789abcdef"

TOKEN_FLAGS: Final = ("--token-env", "ALICE", "--token-env", "BOB")
"""``serve`` flags accepting both tokens (set by `set_tokens`), as principals ALICE and BOB."""


def set_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALICE", ALICE)
    monkeypatch.setenv("BOB", BOB)


def limited_config(
    directory: Path, *rules: str, servers: tuple[str, ...] = ("alpha",), extra: str = ""
) -> str:
    """A config serving the fixture server as each of ``servers``, with each of ``rules``
    (the body of a ``[[serve.limits.rule]]``) and ``extra`` tables."""
    tables = "".join(f"\n[[serve.limits.rule]]\n{rule}\n" for rule in rules)
    path = directory / "limited.toml"
    path.write_text(
        f"[registry]\nstartup_timeout = 15\n\n[serve.limits]\n{tables}\n{extra}\n"
        + "".join(fixture_server(name) for name in servers)
    )
    return str(path)


def limit_of(result: mcp_types.CallToolResult) -> dict[str, Any] | None:
    """What a refused call's ``_meta`` says of the limit; None for a call that ran."""
    meta = result.meta or {}
    found = meta.get("mcpmount/limit")
    return cast("dict[str, Any]", found) if isinstance(found, dict) else None


async def allowed(client: Client, tool: str = "alpha__echo", **arguments: Any) -> bool:
    """Call ``tool``: True if it ran (and answered as it does), False if a limit refused it."""
    if tool == "alpha__echo" and not arguments:
        arguments = {"text": "hi"}
    result = await client.call_tool(tool, arguments)
    if limit_of(result) is not None:
        assert result.is_error
        return False
    assert not result.is_error, result
    return True
