"""A rate limit holds across two `mcpmount serve` replicas sharing a real Redis
(``--shared-state``): the calls a token made on one count on the other, each token
apart; without a shared Redis each replica counts alone, and a replica whose Redis is down
counts alone too."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_limits_support import ALICE, BOB, TOKEN_FLAGS, allowed, limited_config, set_tokens

from redis_support import running_redis
from serve.serve_support import served_http, wait_for_tool
from serve_auth.auth_support import bearer_client

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

RULE = 'tools = "alpha__*"\nrate = "3 per 60 seconds"'


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "alone"])
async def test_a_rate_limit_holds_across_replicas_sharing_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    """Shared: ALICE's two calls on replica A and one on B spend her 3 a minute on both,
    while BOB's count is untouched. Alone (the same replicas, no shared state): B still
    allows her three calls of its own."""
    set_tokens(monkeypatch)
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    # The same file name: both replicas are one deployment (one Redis namespace).
    config_a = limited_config(a_dir, RULE)
    config_b = limited_config(b_dir, RULE)
    async with running_redis() as redis:
        flags = (*TOKEN_FLAGS, *(("--shared-state", redis.url) if shared else ()))
        async with (
            served_http(config_a, a_dir, *flags) as (url_a, _),
            served_http(config_b, b_dir, *flags) as (url_b, _),
            bearer_client(url_a, ALICE, mode="legacy") as alice_a,
            bearer_client(url_b, ALICE, mode="auto") as alice_b,
            bearer_client(url_b, BOB, mode="legacy") as bob_b,
        ):
            await wait_for_tool(alice_a, "alpha__echo")
            await wait_for_tool(alice_b, "alpha__echo")
            assert await allowed(alice_a)
            assert await allowed(alice_a)
            assert await allowed(alice_b)
            if shared:
                assert not await allowed(alice_b)
                assert not await allowed(alice_a)
                assert await allowed(bob_b)
            else:  # B counted one: two more, then its own limit
                assert await allowed(alice_b)
                assert await allowed(alice_b)
                assert not await allowed(alice_b)
                assert await allowed(alice_a)


async def test_a_replica_whose_redis_is_down_still_enforces_its_limits_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the shared Redis down, a replica counts in its own memory (its log says Redis is
    unreachable, once for every store on it) rather than letting every call through."""
    set_tokens(monkeypatch)
    config = limited_config(tmp_path, RULE)
    async with running_redis() as redis:
        await redis.stop()
        async with (
            served_http(config, tmp_path, *TOKEN_FLAGS, "--shared-state", redis.url) as (url, _),
            bearer_client(url, ALICE, mode="legacy") as alice,
        ):
            await wait_for_tool(alice, "alpha__echo")
            assert [await allowed(alice) for _ in range(4)] == [True, True, True, False]
    log = " ".join((tmp_path / "serve.log").read_text().split())
    assert "cannot be used: redis unreachable" in log  # once, for every store on it
