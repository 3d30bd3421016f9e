"""``[serve.limits]`` through a real HTTP `mcpmount serve` with real tokens: a rate limit
refuses the call past it with when to retry, and allows again once its window moved on;
each token is counted apart; a concurrency cap refuses a call while the cap's calls run;
a hidden tool is answered as unknown, never as limited."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import MCPError
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

SLOW = 6.0
"""Seconds a slow call takes: long enough to be seen running on a loaded machine."""


async def test_the_call_past_a_rate_is_refused_with_when_to_retry_and_allowed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two calls in a window of 5 s: the third is refused (an ``isError`` result naming the
    tool, the limit and the seconds to wait; nothing reaches the server), and a call is
    allowed again once the window has moved past the first two; BOB's count is its own."""
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

        assert await allowed(bob)  # another token: a count of its own
        assert await allowed(bob)
        assert not await allowed(bob)
        assert not await allowed(alice)  # refused calls were not counted either

        with anyio.fail_after(WINDOW + BEHAVIOUR):
            while not await allowed(alice):
                await anyio.sleep(0.2)
        assert time.monotonic() - first >= WINDOW - 1  # not before the window moved on


@pytest.mark.slow
async def test_a_concurrency_cap_refuses_a_call_while_its_calls_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``concurrency = 2`` on ``alpha__sleep``, while two slow calls of ALICE run, her
    third is refused and BOB's runs; once they end, hers runs again."""
    set_tokens(monkeypatch)
    config = limited_config(tmp_path, 'tools = "alpha__sleep"\nconcurrency = 2')
    async with (
        served_http(config, tmp_path, *TOKEN_FLAGS) as (url, _),
        bearer_client(url, ALICE, mode="legacy") as alice,
        bearer_client(url, BOB, mode="legacy") as bob,
    ):
        await wait_for_tool(alice, "alpha__sleep")

        async def sleeper() -> None:  # again if a probe had the place a moment
            with anyio.fail_after(BEHAVIOUR + SLOW):
                while not await allowed(alice, "alpha__sleep", seconds=SLOW):
                    await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(sleeper)
            with anyio.fail_after(BEHAVIOUR):  # until both run on the server
                while await allowed(alice, "alpha__sleep", seconds=0):
                    await anyio.sleep(0.05)
            refused = await alice.call_tool("alpha__sleep", {"seconds": 0})
            limit = limit_of(refused)
            assert limit is not None, refused
            assert limit["limit"] == "2 calls at once"
            assert limit["retryAfter"] >= 1
            assert await allowed(bob, "alpha__sleep", seconds=0)
            assert await allowed(alice)  # another tool: not capped
        assert await allowed(alice, "alpha__sleep", seconds=0)  # both ended: places free


@pytest.mark.slow
async def test_a_hidden_tool_is_answered_as_unknown_not_as_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token that may not see ``alpha`` gets, for a call of ``alpha__echo`` past the
    limit, exactly what a name mounted nowhere gets: the limit is behind the visibility
    door, and counts none of its calls."""
    set_tokens(monkeypatch)
    config = limited_config(
        tmp_path,
        'rate = "1 per 60 seconds"',
        servers=("alpha", "beta"),
        extra='[serve.tokens.blind]\ntoken = "${BLIND}"\nnamespaces = ["beta"]\n',
    )
    blind_token = "blind-token-0123456789abcdef"
    monkeypatch.setenv("BLIND", blind_token)
    async with (
        served_http(config, tmp_path, *TOKEN_FLAGS) as (url, _),
        bearer_client(url, blind_token, mode="legacy") as blind,
    ):
        await wait_for_tool(blind, "beta__echo")
        answers: list[str] = []
        for name in ("alpha__echo", "alpha__echo", "gamma__echo", "gamma__echo"):
            with pytest.raises(MCPError) as caught:
                await blind.call_tool(name, {"text": "hi"})
            answers.append(str(caught.value).replace(name, "NAME"))
        assert len(set(answers)) == 1, answers
        assert await allowed(blind, "beta__echo", text="hi")
        assert not await allowed(blind, "beta__echo", text="hi")
