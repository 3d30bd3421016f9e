"""``[serve.limits]`` caps and the visibility door, through a real HTTP `mcpmount serve`
with real tokens: a concurrency cap refuses a call while the cap's calls run; a hidden
tool is answered as unknown, never as limited."""

from __future__ import annotations

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

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

SLOW = 6.0
"""Seconds a slow call takes: long enough to be seen running on a loaded machine."""


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
