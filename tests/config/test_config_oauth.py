"""The ``oauth`` key of url servers: a flag or a table, in TOML and in mcpServers files."""

from __future__ import annotations

import json

from config_support import SECRET, Write, http, problems_of

from mcpmount.config import load_config


def test_oauth_true_is_the_default_table(write: Write) -> None:
    path = write("c.toml", '[servers.t]\nurl = "https://t.example/mcp"\noauth = true\n')
    oauth = http(load_config(path, environ={}), "t").oauth
    assert oauth is not None
    assert (oauth.grant, oauth.client_id, oauth.scope(), oauth.callback_port) == (
        "authorization_code",
        None,
        None,
        0,
    )
    path = write("d.toml", '[servers.t]\nurl = "https://t.example/mcp"\noauth = false\n')
    assert http(load_config(path, environ={}), "t").oauth is None


def test_client_credentials_take_a_secret_from_the_environment_and_hide_it(write: Write) -> None:
    path = write(
        "c.toml",
        """
        [servers.crm]
        url = "https://crm.example/mcp"
        [servers.crm.oauth]
        grant = "client_credentials"
        client_id = "me"
        client_secret = "${CRM_SECRET}"
        issuer = "https://auth.example"
        scopes = ["read", "write"]
        """,
    )
    spec = http(load_config(path, environ={"CRM_SECRET": SECRET}), "crm")
    assert spec.oauth is not None
    assert spec.oauth.secret() == SECRET
    assert spec.oauth.scope() == "read write"
    assert SECRET not in repr(spec)
    assert spec.redact(f"token request with {SECRET}") == "token request with ***"


def test_client_credentials_need_id_secret_and_issuer(write: Write) -> None:
    path = write(
        "c.toml",
        """
        [servers.crm]
        url = "https://crm.example/mcp"
        oauth = { grant = "client_credentials", client_id = "me", client_secret = "x" }
        """,
    )
    [problem] = problems_of(path)
    assert problem.startswith("servers.crm.oauth: the client_credentials grant needs client_id")
    assert "issuer" in problem


def test_a_secret_needs_its_client_id(write: Write) -> None:
    path = write(
        "c.toml", '[servers.t]\nurl = "https://t.example/mcp"\noauth = { client_secret = "x" }\n'
    )
    [problem] = problems_of(path)
    assert "client_secret needs the client_id it belongs to" in problem


def test_oauth_and_headers_command_are_one_or_the_other(write: Write) -> None:
    path = write(
        "c.toml",
        """
        [servers.t]
        url = "https://t.example/mcp"
        headers_command = ["token-helper"]
        oauth = true
        """,
    )
    [problem] = problems_of(path)
    assert problem.startswith("servers.t.oauth: give either oauth or headers_command")


def test_an_unknown_oauth_key_is_named(write: Write) -> None:
    path = write("c.toml", '[servers.t]\nurl = "https://t.example/mcp"\noauth = { client = "x" }\n')
    [problem] = problems_of(path)
    assert problem.startswith("servers.t.oauth.client:")


def test_host_files_take_oauth_in_their_own_spelling(write: Write) -> None:
    hosts = {
        "mcpServers": {
            "Tracker": {"type": "http", "url": "https://t.example/mcp", "oauth": True},
            "Crm": {
                "type": "http",
                "url": "https://crm.example/mcp",
                "oauth": {"clientId": "me", "callbackPort": 8765},
            },
        }
    }
    config = load_config(write("mcp.json", json.dumps(hosts)), environ={})
    assert http(config, "tracker").oauth is not None
    oauth = http(config, "crm").oauth
    assert oauth is not None
    assert (oauth.client_id, oauth.callback_port) == ("me", 8765)
