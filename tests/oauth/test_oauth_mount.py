"""OAuth end to end: `mcpmount login` in a (scripted) browser, then mounts that use and refresh
the kept tokens, against oidc-provider and an MCP server that checks every token it gets."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream

from mcpmount import open_registry
from mcpmount.auth import TokenStore
from mcpmount.config import load_config
from mcpmount.errors import SecretRefusedError
from oauth.oauth_browser_support import Setup, login_file
from oauth.oauth_support import (
    authorization_server,
    register_by_hand,
    resource_server,
    revoke_refresh_token,
)
from serve.serve_support import BEHAVIOUR, served_stdio, wait_for_tool
from support import free_port

# Two servers, a login and token lifetimes of seconds: generous on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(180)]


@pytest.fixture
async def setup(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Setup]:
    ttl: int = getattr(request, "param", 300)  # seconds an access token lives
    async with (
        authorization_server(access_ttl=ttl) as server,
        resource_server(server.issuer) as url,
    ):
        config = tmp_path / "mcpmount.toml"
        config.write_text(f'[servers.tracker]\nurl = "{url}"\noauth = true\n')
        yield Setup(server, url, config, tmp_path / "tokens")


async def test_login_then_every_command_uses_the_kept_tokens(setup: Setup) -> None:
    out, err = await setup.login()
    assert "Logged in to tracker" in out
    assert stat.S_IMODE(setup.login_file().stat().st_mode) == 0o600
    access, refresh = setup.access_token(), setup.refresh_token()

    called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 0, called.stderr
    assert "alice" in called.stdout
    checked = await setup.mcpmount("check", "--json", str(setup.config))
    assert checked.returncode == 0, checked.stderr
    for said in (out, err, called.stdout, called.stderr, checked.stdout, checked.stderr):
        assert access not in said
        assert refresh not in said

    logged_out = await setup.mcpmount("logout", "tracker", str(setup.config))
    assert logged_out.returncode == 0
    assert "Forgot the login of tracker" in logged_out.stdout
    assert not list(setup.tokens.glob("*.json"))


async def test_without_a_login_a_mount_says_what_to_run_and_opens_no_browser(
    setup: Setup,
) -> None:
    with anyio.fail_after(30):  # nothing waits for a person
        called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 1
    assert "server 'tracker'" in called.stderr
    assert "needs an OAuth login and none is stored; run `mcpmount login tracker`" in called.stderr
    assert "Open this URL" not in called.stderr


@pytest.mark.parametrize("setup", [3], indirect=True)
async def test_an_expired_access_token_is_refreshed_and_kept(setup: Setup) -> None:
    await setup.login()
    first, first_refresh = setup.access_token(), setup.refresh_token()
    await anyio.sleep(3.5)
    config = load_config(setup.config, environ=setup.env())
    async with open_registry(config) as registry:
        result = await registry.call("tracker__whoami", {})
        assert "alice" in str(result.content)
        assert setup.access_token() != first
        assert setup.refresh_token() != first_refresh  # oidc-provider rotates them
        await anyio.sleep(3.5)  # the connection refreshes again while mounted
        result = await registry.call("tracker__whoami", {})
        assert "alice" in str(result.content)


@pytest.mark.parametrize("setup", [3], indirect=True)
async def test_processes_refreshing_at_once_share_one_refresh(setup: Setup) -> None:
    await setup.login()
    await anyio.sleep(3.5)
    login = TokenStore(setup.tokens).login(setup.url, None)
    command = [sys.executable, "-m", "mcpmount", "-v", "call", "tracker__whoami"]
    said: list[str] = []

    # Both wait on the lock this test holds, then refresh one after the other: the second
    # must take the first one's tokens, or it spends a rotated refresh token and the
    # authorization server revokes the whole login.
    async with AsyncExitStack() as stack:
        async with login.locked():
            processes = [
                await stack.enter_async_context(
                    await anyio.open_process([*command, str(setup.config)], env=setup.env())
                )
                for _ in range(2)
            ]
            for process in processes:
                assert process.stderr is not None
                errors = TextReceiveStream(process.stderr)
                said.append("")
                async for chunk in errors:
                    said[-1] += chunk
                    if "waiting for another process's OAuth refresh" in said[-1]:
                        break
                else:
                    raise AssertionError(f"it never waited for the lock: {said[-1]}")
        for i, process in enumerate(processes):
            assert process.stderr is not None
            said[i] += "".join([chunk async for chunk in TextReceiveStream(process.stderr)])
            assert await process.wait() == 0, said[i]
    await anyio.sleep(3.5)
    again = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert again.returncode == 0, again.stderr  # the login survived


@pytest.mark.parametrize("setup", [3], indirect=True)
async def test_a_revoked_refresh_token_says_to_log_in_again(setup: Setup) -> None:
    await setup.login()
    client = setup.stored()["client"]
    assert isinstance(client, dict)
    client_id = str(client["client_id"])  # pyright: ignore[reportUnknownArgumentType]
    await revoke_refresh_token(setup.server, setup.refresh_token(), client_id)
    await anyio.sleep(3.5)
    called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 1
    assert "server 'tracker'" in called.stderr
    assert "refused the stored refresh token; run `mcpmount login tracker`" in called.stderr


async def test_client_credentials_need_no_login(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    async with authorization_server() as server, resource_server(server.issuer) as url:
        config = tmp_path / "mcpmount.toml"
        config.write_text(
            f'[servers.crm]\nurl = "{url}"\n[servers.crm.oauth]\ngrant = "client_credentials"\n'
            f'client_id = "{server.client_id}"\nclient_secret = "${{CRM_SECRET}}"\n'
            f'issuer = "{server.issuer}"\nscopes = {json.dumps(server.scopes)}\n'
            f'[registry]\ntoken_dir = "{tokens}"\n'
        )
        environ = {**os.environ, "CRM_SECRET": server.client_secret}
        async with open_registry(load_config(config, environ=environ)) as registry:
            result = await registry.call("crm__whoami", {})
        assert server.client_id in str(result.content)
        for kept in tokens.glob("*.json"):
            assert server.client_secret not in kept.read_text()


async def test_the_tokens_a_server_sends_are_secrets_no_other_server_gets(
    tmp_path: Path,
) -> None:
    """Once sent, the access token is guarded like the server's other secrets: a call to
    another server carrying it is refused, naming whose it is."""
    tokens = tmp_path / "tokens"
    echo = json.dumps([str(Path(__file__).parents[1] / "servers" / "token_thief_server.py")])
    async with authorization_server() as server, resource_server(server.issuer) as url:
        config = tmp_path / "mcpmount.toml"
        config.write_text(
            f'[servers.crm]\nurl = "{url}"\n[servers.crm.oauth]\ngrant = "client_credentials"\n'
            f'client_id = "{server.client_id}"\nclient_secret = "{server.client_secret}"\n'
            f'issuer = "{server.issuer}"\nscopes = {json.dumps(server.scopes)}\n'
            f'[servers.other]\ncommand = "{sys.executable}"\nargs = {echo}\n'
            f'[registry]\ntoken_dir = "{tokens}"\n'
        )
        async with open_registry(load_config(config)) as registry:
            await registry.call("crm__whoami", {})
            access = str(json.loads(login_file(tokens).read_text())["tokens"]["access_token"])
            with pytest.raises(SecretRefusedError) as caught:
                await registry.call("other__echo", {"text": access})
    assert caught.value.owner == "crm"
    assert access not in str(caught.value)


async def test_logins_can_live_in_the_system_keyring(setup: Setup, tmp_path: Path) -> None:
    setup.extra_env = {
        "MCPMOUNT_TOKEN_STORE": "keyring",
        # A real keyring backend that needs no desktop session: a file under XDG_DATA_HOME.
        "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    await setup.login()
    assert not list(setup.tokens.glob("*.json"))  # only the lock file's directory
    [keyring_file] = (tmp_path / "data").rglob("*.cfg")
    assert "mcpmount" in keyring_file.read_text()
    called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 0, called.stderr
    assert "alice" in called.stdout
    logged_out = await setup.mcpmount("logout", "tracker", str(setup.config))
    assert "Forgot the login of tracker" in logged_out.stdout
    failed = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert "run `mcpmount login tracker`" in failed.stderr


async def test_a_denied_login_fails_says_why_and_keeps_the_last_login(setup: Setup) -> None:
    await setup.login()
    access = setup.access_token()
    _, err = await setup.login(deny=True, status=1)
    assert setup.access_token() == access
    said = " ".join(err.split())
    assert "server 'tracker'" in said
    assert "the authorization server refused the login: End-User aborted interaction" in said
    called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 0, called.stderr


async def test_a_client_registered_by_hand_logs_in_on_its_fixed_port(setup: Setup) -> None:
    port = free_port()  # for the registered redirect URI
    client_id = await register_by_hand(setup.server, port)
    setup.config.write_text(
        f'[servers.tracker]\nurl = "{setup.url}"\n'
        f'[servers.tracker.oauth]\nclient_id = "{client_id}"\ncallback_port = {port}\n'
    )
    await setup.login()  # the server takes only the registered redirect URI, with its port
    called = await setup.mcpmount("call", "tracker__whoami", str(setup.config))
    assert called.returncode == 0, called.stderr
    assert f"client_id={client_id}" in called.stdout


async def test_serve_puts_the_logged_in_server_behind_one_endpoint(
    setup: Setup, tmp_path: Path
) -> None:
    await setup.login()
    # serve's child gets a minimal environment: the token directory goes in the config.
    setup.config.write_text(
        setup.config.read_text() + f'[registry]\ntoken_dir = "{setup.tokens}"\n'
    )
    async with served_stdio(str(setup.config), tmp_path) as client:
        await wait_for_tool(client, "tracker__whoami")
        with anyio.fail_after(BEHAVIOUR):
            result = await client.call_tool("tracker__whoami", {})
    assert "sub=alice" in str(result.content)


async def test_calls_to_a_json_answering_server_are_not_serialized_by_the_token(
    tmp_path: Path,
) -> None:
    """A server that answers a POST only when the call is done holds each request open for
    the whole call; two calls must still run at once, not one after the other."""
    tokens = tmp_path / "tokens"
    async with (
        authorization_server() as server,
        resource_server(server.issuer, json_response=True) as url,
    ):
        config = tmp_path / "mcpmount.toml"
        config.write_text(
            f'[servers.crm]\nurl = "{url}"\n[servers.crm.oauth]\ngrant = "client_credentials"\n'
            f'client_id = "{server.client_id}"\nclient_secret = "{server.client_secret}"\n'
            f'issuer = "{server.issuer}"\nscopes = {json.dumps(server.scopes)}\n'
            f'[registry]\ntoken_dir = "{tokens}"\n'
        )
        spans: list[list[float]] = []
        async with open_registry(load_config(config, environ={})) as registry:

            async def pause() -> None:
                result = await registry.call("crm__pause", {"seconds": 1.5})
                spans.append([float(t) for t in str(result.content[0].text).split()])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(pause)
                tasks.start_soon(pause)
    (_, first_end), (second_start, _) = sorted(spans)
    assert second_start < first_end, "the second call began only when the first had ended"
