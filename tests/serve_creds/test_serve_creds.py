"""Per-principal upstream credentials through a real `serve`: each principal logs in to the
real authorization server through a URL-mode elicitation and serve's callback, its calls
carry its own token, never another's, and what is kept of them is encrypted."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from mcp import MCPError
from mcp_types import URL_ELICITATION_REQUIRED
from serve_creds_support import (
    ALICE,
    BOB,
    gateway,
    log_in,
    principal,
    served,
)

pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(240)]


async def _login_url(gateway_url: str, token: str) -> str:
    """The URL a handshake-era principal's first call is answered with (-32042)."""
    async with principal(gateway_url, token, mode="legacy") as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("tracker__whoami", {})
    error = raised.value.error
    assert error.code == URL_ELICITATION_REQUIRED, error
    data = cast("dict[str, list[dict[str, str]]]", error.data)
    [elicitation] = data["elicitations"]
    assert elicitation["mode"] == "url"
    assert elicitation["elicitationId"]
    return elicitation["url"]


async def test_a_principal_without_a_login_is_sent_to_log_in_not_given_another_login(
    tmp_path: Path,
) -> None:
    """After Alice logged in, Bob's call is still asked to log in: it never runs on hers."""
    async with gateway(tmp_path) as found, served(found, tmp_path / "serve") as url:
        await log_in(await _login_url(url, ALICE), "alice")
        await _login_url(url, BOB)  # asked to log in, as Alice was before her login
        assert found.recorded() == []  # no call of Bob's reached the server
