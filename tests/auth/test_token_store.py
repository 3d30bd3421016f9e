"""The token store: one private file per login, whole writes, and a lock every process shares."""

from __future__ import annotations

import stat
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcpmount.auth import TokenStore

pytestmark = pytest.mark.usefixtures("no_leaks")

URL = "https://mcp.example.com/mcp"


def _client() -> OAuthClientInformationFull:
    return OAuthClientInformationFull(client_id="abc", redirect_uris=None)


async def test_a_login_is_a_private_file_that_reads_back(tmp_path: Path) -> None:
    login = TokenStore(tmp_path / "tokens").login(URL, None)
    before = time.time()
    await login.set_client_info(_client())
    await login.set_tokens(OAuthToken(access_token="A1", refresh_token="R1", expires_in=60))

    assert stat.S_IMODE(login.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(login.path.parent.stat().st_mode) == 0o700
    tokens = await login.get_tokens()
    assert tokens is not None
    assert (tokens.access_token, tokens.refresh_token) == ("A1", "R1")
    expires_at = login.expires_at()
    assert expires_at is not None
    assert before + 60 <= expires_at <= time.time() + 60
    client = await login.get_client_info()
    assert client is not None
    assert client.client_id == "abc"
    assert [p.name for p in login.path.parent.iterdir()] == [login.path.name]  # no temporary


async def test_logins_are_keyed_by_url_and_client(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    paths = {
        store.login(URL, None).path,
        store.login(URL, "abc").path,
        store.login(URL + "/other", None).path,
    }
    assert len(paths) == 3
    assert store.login(URL, "abc").path == store.login(URL, "abc").path


async def test_forgetting_tokens_keeps_the_registration(tmp_path: Path) -> None:
    login = TokenStore(tmp_path).login(URL, None)
    await login.set_client_info(_client())
    await login.set_tokens(OAuthToken(access_token="A1", expires_in=60))
    login.forget_tokens()
    assert await login.get_tokens() is None
    assert login.expires_at() is None
    assert await login.get_client_info() is not None
    assert login.forget() is True
    assert login.forget() is False
    assert await login.get_client_info() is None


async def test_a_damaged_login_is_no_login(tmp_path: Path) -> None:
    login = TokenStore(tmp_path).login(URL, None)
    login.path.write_text('{"tokens": {"access_token": 5}, "expires_at": "soon"')
    assert await login.get_tokens() is None
    login.path.write_text('{"tokens": {"token_type": "Bearer"}, "expires_at": "soon"}')
    assert await login.get_tokens() is None
    assert login.expires_at() is None


async def test_two_tasks_take_the_lock_in_turn(tmp_path: Path) -> None:
    login = TokenStore(tmp_path).login(URL, None)
    inside = 0
    most = 0

    async def hold() -> None:
        nonlocal inside, most
        async with login.locked():
            inside += 1
            most = max(most, inside)
            await anyio.sleep(0.2)
            inside -= 1

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            for _ in range(3):
                tasks.start_soon(hold)
    assert most == 1


_HOLDER = textwrap.dedent(
    """
    import sys, time, anyio
    from mcpmount.auth import TokenStore

    async def main():
        login = TokenStore(sys.argv[1]).login(sys.argv[2], None)
        async with login.locked():
            print("held", flush=True)
            await anyio.sleep(1.0)
            print(time.time(), flush=True)

    anyio.run(main)
    """
)


async def test_another_process_waits_for_the_lock(tmp_path: Path) -> None:
    login = TokenStore(tmp_path).login(URL, None)
    command = [sys.executable, "-c", _HOLDER, str(tmp_path), URL]
    with anyio.fail_after(30):
        async with await anyio.open_process(command, stderr=None) as holder:
            assert holder.stdout is not None
            lines = TextReceiveStream(holder.stdout)
            assert (await lines.receive()).strip() == "held"
            async with login.locked():
                taken = time.time()
            said = ""
            async for chunk in lines:
                said += chunk
            await holder.wait()
    assert taken >= float(said)
