"""Per-principal upstream credentials through a real `serve`: each principal logs in to the
real authorization server through a URL-mode elicitation and serve's callback, its calls
carry its own token, never another's, and what is kept of them is encrypted."""

from __future__ import annotations

from pathlib import Path
from typing import cast
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import MCPError
from mcp_types import URL_ELICITATION_REQUIRED
from redis import Redis
from serve_creds_support import (
    ALICE,
    BOB,
    Gateway,
    LogsIn,
    files_hold,
    gateway,
    log_in,
    principal,
    served,
    text,
)

from redis_support import running_redis

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


async def _whoami(url: str, token: str) -> str:
    async with principal(url, token, mode="legacy") as client:
        return text(await client.call_tool("tracker__whoami", {}))


def _assert_apart(found: Gateway) -> None:
    """Every call upstream carried its own subject's token, and the two never met."""
    alice, bob = found.tokens_of("alice"), found.tokens_of("bob")
    assert alice
    assert bob
    assert not alice & bob
    assert found.tokens_of("operator") == set()  # no principal's call went as the operator


async def test_each_principal_logs_in_itself_and_its_calls_carry_its_own_token(
    tmp_path: Path,
) -> None:
    """Alice logs in through -32042 (2025-11-25), Bob through an elicitation round
    (2026-07-28); each call upstream carries the caller's own token, none the other's, and
    neither token is in any file as it is."""
    async with gateway(tmp_path) as found, served(found, tmp_path / "serve") as url:
        alice_url = await _login_url(url, ALICE)
        query = parse_qs(urlsplit(alice_url).query)
        assert query["code_challenge_method"] == ["S256"]
        assert query["redirect_uri"] == [url.removesuffix("/mcp") + "/oauth/callback"]
        assert "Logged in to tracker" in await log_in(alice_url, "alice")

        # Bob has no login for Alice's: his call is sent to log in, in his era's form.
        bob = LogsIn("bob")
        async with principal(url, BOB, mode="auto", logs_in=bob) as client:
            for _ in range(2):
                assert "sub=bob" in text(await client.call_tool("tracker__whoami", {}))
        assert len(bob.asked) == 1  # once logged in, not asked again

        for _ in range(2):
            assert "sub=alice" in await _whoami(url, ALICE)
        _assert_apart(found)
        assert list((found.tokens / "principals").glob("*.sealed"))
        for token in found.tokens_of("alice") | found.tokens_of("bob"):
            assert files_hold(found.tokens, token) == []  # sealed: in no file as it is


@pytest.mark.slow
async def test_with_shared_credentials_every_principal_calls_as_the_operator(
    tmp_path: Path,
) -> None:
    """The control: without per_principal, both principals' calls carry the one shared
    login's token (what the test above would see without the feature)."""
    async with (
        gateway(tmp_path, credentials="shared") as found,
        served(found, tmp_path / "serve") as url,
    ):
        assert "sub=operator" in await _whoami(url, ALICE)
        assert "sub=operator" in await _whoami(url, BOB)
        assert found.tokens_of("alice") == found.tokens_of("bob") == set()


@pytest.mark.slow
async def test_a_principal_without_a_login_is_sent_to_log_in_not_given_another_login(
    tmp_path: Path,
) -> None:
    """After Alice logged in, Bob's call is still asked to log in: it never runs on hers;
    a state serve did not give finishes no login."""
    async with gateway(tmp_path) as found, served(found, tmp_path / "serve") as url:
        alice_url = await _login_url(url, ALICE)
        await log_in(alice_url, "alice")
        await _login_url(url, BOB)  # asked to log in, as Alice was before her login
        assert found.recorded() == []  # no call of Bob's reached the server
        async with httpx2.AsyncClient(timeout=30) as http:
            callback = url.removesuffix("/mcp") + "/oauth/callback"
            forged = await http.get(callback, params={"state": "forged", "code": "stolen"})
        assert forged.status_code == 400
        assert "unknown, already used or expired" in forged.text


@pytest.mark.slow
async def test_replicas_share_sealed_logins_in_redis(tmp_path: Path) -> None:
    """A login started at one replica is finished at the other's callback; both then call
    with it; every value in Redis is sealed (no token in it as it is)."""
    async with (
        running_redis() as redis,
        gateway(tmp_path) as found,
        served(found, tmp_path / "one", "--shared-state", redis.url) as one,
        served(found, tmp_path / "two", "--shared-state", redis.url) as two,
    ):
        # The browser comes back to the other replica (a load balancer's choice).
        await log_in(await _login_url(one, ALICE), "alice", via=two)
        assert "sub=alice" in await _whoami(two, ALICE)
        assert "sub=alice" in await _whoami(one, ALICE)
        assert list((found.tokens / "principals").glob("*.sealed")) == []  # in Redis only
        client = Redis.from_url(redis.url)  # pyright: ignore[reportUnknownMemberType]
        try:
            keys = cast("list[bytes]", client.keys("mcpmount:logins:*"))  # pyright: ignore[reportUnknownMemberType]
            values = [cast("bytes", client.get(key)) for key in keys]
        finally:
            client.close()
        assert values
        for token in found.tokens_of("alice"):
            assert [value for value in values if token.encode() in value] == []
