"""``[serve.limits]`` through a real HTTP `mcpmount serve` with real tokens: a rate limit
refuses the call past it with when to retry, and allows again once its window moved on;
each token is counted apart (caps and hidden tools: test_serve_limits_caps.py)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from serve_limits_support import (
    ALICE,
    BOB,
    TOKEN_FLAGS,
    allowed,
    limit_of,
    limited_config,
    set_tokens,
)

from serve.serve_support import BEHAVIOUR, served_http, wait_for_tool
from serve_auth.auth_support import bearer_client

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

WINDOW = 5
"""Seconds of the rate limits' window: the calls of a test fit well within it."""


async def test_the_call_past_a_rate_is_refused_with_when_to_retry_and_allowed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two calls in a window of 5 s: the third is refused (an ``isError`` result naming the
    tool, the limit and the seconds to wait; nothing reaches the server), and a call is
    allowed again once the window has moved past the first two, through ``call_tool`` too;
    BOB's count is its own."""
    set_tokens(monkeypatch)
    config = limited_config(tmp_path, f'tools = "alpha__*"\nrate = "2 per {WINDOW} seconds"')
    async with (
        served_http(config, tmp_path, *TOKEN_FLAGS) as (url, _),
        bearer_client(url, ALICE, mode="legacy") as alice,
        bearer_client(url, BOB, mode="auto") as bob,
    ):
        await wait_for_tool(alice, "alpha__echo")
        first = time.monotonic()
        assert await allowed(alice)
        assert await allowed(alice)
        refused = await alice.call_tool("alpha__echo", {"text": "hi"})
        assert time.monotonic() - first < WINDOW, "too slow a machine for this window"
        limit = limit_of(refused)
        assert refused.is_error
        assert limit is not None, refused
        assert limit["tool"] == "alpha__echo"
        assert limit["limit"] == f"2 calls per {WINDOW} seconds"
        assert 1 <= limit["retryAfter"] <= WINDOW
        text = refused.content[0].text  # type: ignore[union-attr]
        assert "alpha__echo was not called" in text
        assert f"2 calls per {WINDOW} seconds" in text
        assert f"retry in {limit['retryAfter']} s" in text

        via = await alice.call_tool("call_tool", {"name": "alpha__echo", "arguments": {}})
        assert limit_of(via) is not None, via  # call_tool's call counts as the tool's

        assert await allowed(bob)  # another token: a count of its own
        assert await allowed(bob)
        assert not await allowed(bob)
        assert not await allowed(alice)  # refused calls were not counted either

        with anyio.fail_after(WINDOW + BEHAVIOUR):
            while not await allowed(alice):
                await anyio.sleep(0.2)
        assert time.monotonic() - first >= WINDOW - 1  # not before the window moved on
