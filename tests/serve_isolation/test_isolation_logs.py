"""Log messages and log levels stay within what a token may see.

A hidden server's log messages reach only the clients that may see it, and a limited
client's level (``logging/setLevel``, or a 2026-07-28 request's opt-in) is asked of the
servers it may see only. The servers record each ``logging/setLevel`` they receive.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_support import (
    FULL,
    HIDDEN,
    LIMITED,
    PRIVATE,
    PUB,
    principal,
    recorded,
    serving,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


def _levels(tmp_path: Path, namespace: str) -> list[str]:
    """The ``logging/setLevel`` requests the server mounted as ``namespace`` received."""
    return [line for line in recorded(tmp_path, namespace) if line.startswith("logging/")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_limited_clients_level_is_asked_of_its_servers_and_hidden_logs_never_reach_it(
    tmp_path: Path, mode: str
) -> None:
    """The limited client wants debug: its server is asked for debug, the hidden one is not.
    The full client's call of the hidden server's log tool is logged to the full client,
    never to the limited one, which does get its own server's messages."""
    level: mcp_types.LoggingLevel | None = "debug" if mode == "auto" else None
    async with (
        serving(tmp_path) as url,
        principal(url, FULL, mode="legacy") as full,
        principal(url, LIMITED, mode=mode, log_level=level) as limited,
    ):
        with anyio.fail_after(BEHAVIOUR):
            if mode == "legacy":
                await limited.set_level("debug")
            else:  # the opt-in rides every request; the level is asked before it is answered
                await limited.client.call_tool(f"{PUB}__echo", {"text": "hi"})
            # Answered: every server asked has recorded it.
            pub_levels, hidden_levels = _levels(tmp_path, PUB), _levels(tmp_path, HIDDEN)
            await full.client.call_tool(f"{HIDDEN}__log", {"text": "private log"})
            await full.wait_for_log(PRIVATE)
            await limited.client.call_tool(f"{PUB}__log", {"text": "public log"})
            # The hidden server's messages, sent first on the same stream, would be here.
            await limited.wait_for_log("pub log debug: public log")
    assert pub_levels == ["logging/setLevel debug"]
    assert hidden_levels == []
    assert {entry.logger for entry in limited.logs} == {PUB}
    assert [e.data for e in limited.logs if PRIVATE in str(e.data) or HIDDEN in str(e.data)] == []
