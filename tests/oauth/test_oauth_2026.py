"""The OAuth client of the 2026-07-28 rules, through `mcpmount login`, `call` and the library,
against oidc-provider: a Client ID Metadata Document where the authorization server takes one,
logins kept per issuer (SEP-2352), the authorization response's `iss` checked (RFC 9207),
and more scope asked for mid-session (403 `insufficient_scope`) granted."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import xxhash

from mcpmount import open_registry
from mcpmount.auth import TokenStore
from mcpmount.config import load_config
from mcpmount.errors import UpstreamError
from oauth.oauth_browser_support import Setup, login_file
from oauth.oauth_document_support import document_host
from oauth.oauth_support import (
    AuthorizationServer,
    authorization_server,
    register_by_hand,
    resource_server,
)
from support import free_port

# The room's one module in the working tier, where it keeps its three cheapest tests (a
# response from another issuer refused, both ways; a machine client's scope step-up): each
# test starts oidc-provider, and the others cost 4 to 10 s of CPU each.
pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(180)]

DOCUMENT = {
    "client_name": "mcpmount",
    "redirect_uris": ["http://127.0.0.1/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}
"""The client id metadata document docs/recipes/oauth.md tells users to host."""


def tracker(url: str, oauth: str = "") -> str:
    """A config with server ``tracker`` at ``url``; ``oauth`` is its oauth table's body."""
    table = f"[servers.tracker.oauth]\n{oauth}" if oauth else "oauth = true\n"
    return f'[servers.tracker]\nurl = "{url}"\n{table}'


def log_of(server: AuthorizationServer) -> str:
    return server.log.read_text()


def client_id_of(said: str) -> str:
    found = re.search(r"client_id=(\S+)", said)
    assert found, said
    return found.group(1)


def docs_document() -> dict[str, object]:
    """The JSON block of docs/recipes/oauth.md: the document the test hosts is the one shown."""
    page = (Path(__file__).parents[2] / "docs" / "recipes" / "oauth.md").read_text()
    [block] = re.findall(r"```json\n(.*?)```", page, re.DOTALL)
    return json.loads(block)


@pytest.mark.slow
@pytest.mark.parametrize("supported", [True, False], ids=["cimd", "no-cimd"])
async def test_the_metadata_url_is_the_client_id_where_the_server_takes_one(
    tmp_path: Path, supported: bool
) -> None:
    assert docs_document() == {"client_id": "https://example.com/mcpmount-client.json"} | DOCUMENT
    async with (
        document_host(tmp_path, DOCUMENT) as host,
        authorization_server(cimd=host if supported else None) as server,
        resource_server(server.issuer) as url,
    ):
        assert server.metadata.get("client_id_metadata_document_supported", False) is supported
        config = tmp_path / "mcpmount.toml"
        config.write_text(tracker(url, f'client_metadata_url = "{host.url}"\n'))
        setup = Setup(server, url, config, tmp_path / "tokens")
        await setup.login()
        called = await setup.mcpmount("call", "tracker__whoami", str(config))
        assert called.returncode == 0, called.stderr
        registered = "authorization_server: registered" in log_of(server)
        if supported:  # no registration: the authorization server read the document
            assert client_id_of(called.stdout) == host.url
            assert host.fetches >= 1
            assert not registered
        else:  # it registered itself, and nobody read the document
            assert client_id_of(called.stdout) != host.url
            assert host.fetches == 0
            assert registered


@pytest.mark.slow
async def test_two_servers_behind_one_issuer_keep_a_login_each(tmp_path: Path) -> None:
    """Each token is for one server (its audience): each server's login is its own, under
    the issuer they share, and forgetting one leaves the other."""
    async with (
        authorization_server() as server,
        resource_server(server.issuer) as first,
        resource_server(server.issuer) as second,
    ):
        config = tmp_path / "mcpmount.toml"
        config.write_text(tracker(first) + f'[servers.other]\nurl = "{second}"\noauth = true\n')
        setup = Setup(server, first, config, tmp_path / "tokens")
        await setup.login()
        await setup.login(namespace="other")
        store = TokenStore(setup.tokens)
        for url in (first, second):
            login = store.login(url, None)
            assert login.issuer == server.issuer
            tokens = await login.get_tokens()
            assert tokens is not None
        logged_out = await setup.mcpmount("logout", "tracker", str(config))
        assert logged_out.returncode == 0
        called = await setup.mcpmount("call", "other__whoami", str(config))
        assert called.returncode == 0, called.stderr
        gone = await setup.mcpmount("call", "tracker__whoami", str(config))
        assert "run `mcpmount login tracker`" in gone.stderr


@asynccontextmanager
async def moving_server() -> AsyncGenerator[tuple[AuthorizationServer, AuthorizationServer, int]]:
    """Two authorization servers, and a port for a resource server that moves between them."""
    async with authorization_server() as old, authorization_server() as new:
        yield old, new, free_port()


@pytest.mark.slow
async def test_a_server_that_moves_to_another_issuer_gets_a_new_login_there(
    tmp_path: Path,
) -> None:
    async with moving_server() as (old, new, port):
        config = tmp_path / "mcpmount.toml"
        async with resource_server(old.issuer, port=port) as url:
            config.write_text(tracker(url))
            setup = Setup(old, url, config, tmp_path / "tokens")
            await setup.login()
        [old_client] = re.findall(r"registered (\S+)", log_of(old))
        async with resource_server(new.issuer, port=port):
            refused = await setup.mcpmount("call", "tracker__whoami", str(config))
            assert "run `mcpmount login tracker`" in refused.stderr
            setup.server = new
            await setup.login()
            called = await setup.mcpmount("call", "tracker__whoami", str(config))
            assert called.returncode == 0, called.stderr
        # The new server got a registration of its own, and never the old one's client id.
        assert client_id_of(called.stdout) != old_client
        assert "registered" in log_of(new)
        assert old_client not in log_of(new)
        assert TokenStore(setup.tokens).login(url, None).issuer == new.issuer


@pytest.mark.slow
async def test_a_hand_registered_client_is_never_shown_to_another_issuer(
    tmp_path: Path,
) -> None:
    async with moving_server() as (old, new, port):
        config = tmp_path / "mcpmount.toml"
        callback = free_port()
        async with resource_server(old.issuer, port=port) as url:
            client_id = await register_by_hand(old, callback)
            config.write_text(
                tracker(url, f'client_id = "{client_id}"\ncallback_port = {callback}\n')
            )
            setup = Setup(old, url, config, tmp_path / "tokens")
            await setup.login()
        async with resource_server(new.issuer, port=port):
            refused = await setup.mcpmount("login", "tracker", str(config), "--no-browser")
        assert refused.returncode == 1
        said = refused.stderr
        assert "server 'tracker'" in said
        assert f"now names the authorization server {new.issuer}" in said
        assert f"client_id '{client_id}' was used with {old.issuer}" in said
        assert "Open this URL" not in said  # no browser was sent to the new server
        assert "authorization.error" not in log_of(new)


@pytest.mark.slow
async def test_a_login_kept_before_issuers_is_read_and_moved(tmp_path: Path) -> None:
    async with authorization_server() as server, resource_server(server.issuer) as url:
        config = tmp_path / "mcpmount.toml"
        config.write_text(tracker(url))
        setup = Setup(server, url, config, tmp_path / "tokens")
        await setup.login()
        kept = json.loads(login_file(setup.tokens).read_text())
        for found in setup.tokens.glob("*.json"):
            found.unlink()
        # Where and how mcpmount kept a login before: one file per server URL and client.
        legacy = setup.tokens / f"{xxhash.xxh3_128_hexdigest((url + chr(10)).encode())}.json"
        legacy.write_text(json.dumps(kept))
        called = await setup.mcpmount("call", "tracker__whoami", str(config))
        assert called.returncode == 0, called.stderr
        assert json.loads(legacy.read_text())["issuer"] == server.issuer
        assert json.loads(login_file(setup.tokens).read_text())["tokens"] == kept["tokens"]


@asynccontextmanager
async def vault_servers() -> AsyncGenerator[tuple[AuthorizationServer, str]]:
    """An authorization server that grants `mcp` and `admin`, and a server whose `vault`
    needs `admin` besides the `mcp` every call needs."""
    async with (
        authorization_server(scopes=("mcp", "admin")) as server,
        resource_server(server.issuer, vault_scope="admin") as url,
    ):
        yield server, url


@pytest.mark.parametrize("deny", [False, True], ids=["code", "error"])
async def test_an_authorization_response_from_another_issuer_is_refused(
    tmp_path: Path, deny: bool
) -> None:
    forged = "https://as.attacker.example"
    async with (
        authorization_server(response_iss=forged) as server,
        resource_server(server.issuer) as url,
    ):
        config = tmp_path / "mcpmount.toml"
        config.write_text(tracker(url))
        setup = Setup(server, url, config, tmp_path / "tokens")
        out, err = await setup.login(deny=deny, status=1)
    said = " ".join(err.split())
    assert "server 'tracker'" in said
    assert f"the authorization response names issuer '{forged}', not '{server.issuer}'" in said
    assert "log in again" in said
    assert "Logged in" not in out
    assert not [f for f in setup.tokens.glob("*.json") if json.loads(f.read_text()).get("tokens")]


async def test_a_machine_client_gets_the_scope_a_tool_asks_for_mid_session(
    tmp_path: Path,
) -> None:
    async with vault_servers() as (server, url):
        config = tmp_path / "mcpmount.toml"
        config.write_text(
            f'[servers.crm]\nurl = "{url}"\n[servers.crm.oauth]\ngrant = "client_credentials"\n'
            f'client_id = "{server.client_id}"\nclient_secret = "{server.client_secret}"\n'
            f'issuer = "{server.issuer}"\nscopes = ["mcp"]\n'
            f'[registry]\ntoken_dir = "{tmp_path / "tokens"}"\n'
        )
        async with open_registry(load_config(config, environ={})) as registry:
            before = await registry.call("crm__whoami", {})
            assert str(before.content[0].text).endswith(" scopes=mcp")  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]
            opened = await registry.call("crm__vault", {})
            after = await registry.call("crm__whoami", {})
        assert "vault opened with scopes=mcp admin" in str(opened.content)
        assert "scopes=mcp admin" in str(after.content)  # the union: nothing was lost


@pytest.mark.slow
async def test_a_person_is_told_to_log_in_for_more_scope_and_that_login_grants_it(
    tmp_path: Path,
) -> None:
    async with vault_servers() as (server, url):
        config = tmp_path / "mcpmount.toml"
        config.write_text(tracker(url))
        setup = Setup(server, url, config, tmp_path / "tokens")
        await setup.login()
        refused = await setup.mcpmount("call", "tracker__vault", str(config))
        assert refused.returncode == 1
        assert "server 'tracker'" in refused.stderr
        assert "asks for scope 'mcp admin', more than the stored login grants" in refused.stderr
        assert "run `mcpmount login tracker`" in refused.stderr
        assert setup.access_token() not in refused.stderr
        # Only that call failed: in one session, the other tools still answer after it.
        async with open_registry(load_config(config, environ=setup.env())) as registry:
            with pytest.raises(UpstreamError, match="more than the stored login grants"):
                await registry.call("tracker__vault", {})
            assert "sub=alice" in str((await registry.call("tracker__whoami", {})).content)
        await setup.login()
        opened = await setup.mcpmount("call", "tracker__vault", str(config))
        assert opened.returncode == 0, opened.stderr
        assert "vault opened" in opened.stdout
        assert "admin" in opened.stdout.split("scopes=")[1]
        mcp = await setup.mcpmount("call", "tracker__whoami", str(config))
        assert "mcp" in mcp.stdout.split("scopes=")[1].split()  # still granted
