"""OAuth end to end: `mcpmount login` in a (scripted) browser, then mounts that use and refresh
the kept tokens, against oidc-provider and an MCP server that checks every token it gets."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import CompletedProcess

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from oauth_support import (
    AuthorizationServer,
    authorization_server,
    browse,
    resource_server,
    revoke_refresh_token,
)

from mcpmount import open_registry
from mcpmount.auth import TokenStore
from mcpmount.config import load_config

# Two servers, a login and token lifetimes of seconds: generous on a loaded machine.
pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(180)]

_URL_LINE = re.compile(r"Open this URL to log in to (\S+): (\S+)")


@dataclass
class Setup:
    server: AuthorizationServer
    url: str
    config: Path
    tokens: Path
    extra_env: dict[str, str] = field(default_factory=dict[str, str])

    def env(self) -> dict[str, str]:
        return {**os.environ, "MCPMOUNT_TOKEN_DIR": str(self.tokens), **self.extra_env}

    def login_file(self) -> Path:
        [path] = self.tokens.glob("*.json")
        return path

    def stored(self) -> dict[str, object]:
        return json.loads(self.login_file().read_text())

    def access_token(self) -> str:
        tokens = self.stored()["tokens"]
        assert isinstance(tokens, dict)
        return str(tokens["access_token"])  # pyright: ignore[reportUnknownArgumentType]

    def refresh_token(self) -> str:
        tokens = self.stored()["tokens"]
        assert isinstance(tokens, dict)
        return str(tokens["refresh_token"])  # pyright: ignore[reportUnknownArgumentType]

    async def mcpmount(self, *args: str) -> CompletedProcess[str]:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [sys.executable, "-m", "mcpmount", *args], env=self.env(), check=False
            )
        # Rich wraps what it prints at 80 columns when not on a terminal: join the lines.
        err = " ".join(done.stderr.decode().split())
        return CompletedProcess(done.args, done.returncode, done.stdout.decode(), err)

    async def login(self) -> tuple[str, str]:
        """Run `mcpmount login tracker --no-browser`, play the browser; return (stdout, stderr)."""
        command = [sys.executable, "-m", "mcpmount", "login", "tracker", str(self.config)]
        with anyio.fail_after(60):
            async with await anyio.open_process(
                [*command, "--no-browser"], env=self.env()
            ) as process:
                assert process.stderr is not None
                assert process.stdout is not None
                errors = TextReceiveStream(process.stderr)
                said = ""
                async for chunk in errors:
                    said += chunk
                    if found := _URL_LINE.search(said):
                        break
                else:
                    raise AssertionError(f"login printed no URL: {said}")
                assert found.group(1) == "tracker"
                await browse(found.group(2))
                async for chunk in errors:
                    said += chunk
                out = "".join([chunk async for chunk in TextReceiveStream(process.stdout)])
                assert await process.wait() == 0, said
        return out, said


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
    results: list[CompletedProcess[str]] = []

    async def call() -> None:
        results.append(await setup.mcpmount("call", "tracker__whoami", str(setup.config)))

    # Both wait on the lock this test holds, then refresh one after the other: the second
    # must take the first one's tokens, or it spends a rotated refresh token and the
    # authorization server revokes the whole login.
    async with anyio.create_task_group() as tasks, login.locked():
        tasks.start_soon(call)
        tasks.start_soon(call)
        await anyio.sleep(2.0)
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
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
        [kept] = tokens.glob("*.json")
        assert server.client_secret not in kept.read_text()


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
