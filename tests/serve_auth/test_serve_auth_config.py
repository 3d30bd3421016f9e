"""The ``[serve]`` table: loaded and expanded, its problems named without values, its secrets
redacted; and which binds need authentication."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpmount.config import ServeOAuth, ServeSettings, load_config
from mcpmount.errors import ConfigError
from mcpmount.serve.access import HttpSecurity, check_exposure
from serve_auth.auth_support import OTHER_TOKEN, TOKEN

pytestmark = pytest.mark.slow

_SERVER = '[servers.fs]\ncommand = "true"\n'


def _load(tmp_path: Path, table: str, **environ: str) -> ServeSettings:
    path = tmp_path / "mcpmount.toml"
    path.write_text(table + "\n" + _SERVER)
    return load_config(path, environ=environ).serve


def _problems(tmp_path: Path, table: str, **environ: str) -> tuple[str, ...]:
    with pytest.raises(ConfigError) as error:
        _load(tmp_path, table, **environ)
    return error.value.problems


def test_the_serve_table_is_expanded_and_a_relative_tokens_file_is_the_configs(
    tmp_path: Path,
) -> None:
    """Every string may use ${VAR}; tokens stay secret, and a relative path is resolved."""
    serve = _load(
        tmp_path,
        '[serve]\ntokens_file = "tokens.txt"\nallowed_hosts = ["${HOST}"]\n'
        '[serve.tokens.ci]\ntoken = "${CI_TOKEN}"\nnamespaces = ["fs"]\n'
        '[serve.oauth]\nissuer = "https://auth.example.com"\n'
        'jwks_url = "https://auth.example.com/jwks?key=${JWKS_KEY}"\n'
        'resource = "https://mcp.example.com/mcp"\nscopes = ["mcp"]\n',
        HOST="mcp.example.com",
        CI_TOKEN=TOKEN,
        JWKS_KEY="jwks-query-secret",
    )
    assert serve.tokens["ci"].token.get_secret_value() == TOKEN
    assert serve.tokens["ci"].namespaces == ["fs"]
    assert TOKEN not in repr(serve)
    assert serve.tokens_file == str(tmp_path / "tokens.txt")
    assert serve.allowed_hosts == ["mcp.example.com"]
    assert serve.oauth is not None
    assert serve.oauth.scopes == ["mcp"]
    assert serve.authenticated
    said = f"token {TOKEN} and {serve.oauth.jwks_url}"
    assert serve.redact(said) == "token *** and https://auth.example.com/jwks?key=***"


def test_no_serve_table_means_no_authentication(tmp_path: Path) -> None:
    serve = _load(tmp_path, "")
    assert not serve.authenticated
    assert serve == ServeSettings()


def test_problems_name_the_key_and_never_the_value(tmp_path: Path) -> None:
    """A short token, an unset variable, a misspelt key, OAuth missing a key: one line each."""
    problems = _problems(
        tmp_path,
        '[serve]\ntokenz = []\nallowed_hosts = "mcp.example.com"\n'
        '[serve.tokens.short]\ntoken = "${SHORT}"\n'
        '[serve.tokens.unset]\ntoken = "${UNSET_TOKEN}"\n'
        '[serve.oauth]\nissuer = "https://auth.example.com"\n',
        SHORT="tiny-secret",
    )
    text = "\n".join(problems)
    assert "tiny-secret" not in text
    assert "serve.tokenz: unknown key; did you mean 'tokens'?" in problems
    assert "serve.allowed_hosts: must be a list" in problems
    assert "serve.tokens.short.token: must be at least 16 characters" in problems
    unset = "serve.tokens.unset.token: environment variable UNSET_TOKEN is not set"
    assert any(p.startswith(unset) for p in problems)
    assert "serve.oauth.jwks_url: is required" in problems
    assert "serve.oauth.resource: is required" in problems


def test_a_misspelt_serve_table_is_named(tmp_path: Path) -> None:
    assert _problems(tmp_path, "[serv]\n") == ("serv: unknown key; did you mean 'serve'?",)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_authentication(host: str) -> None:
    check_exposure(host, HttpSecurity.build(ServeSettings()))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "mcp.example.com"])
def test_beyond_loopback_authentication_or_an_explicit_allowance_is_needed(
    host: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as error:
        check_exposure(host, HttpSecurity.build(ServeSettings()))
    assert f"refusing to serve HTTP on {host} without authentication" in str(error.value)
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{OTHER_TOKEN}\n")
    check_exposure(host, HttpSecurity.build(ServeSettings(tokens_file=str(tokens))))
    check_exposure(host, HttpSecurity.build(ServeSettings(allow_unauthenticated=True)))


def test_allowed_hosts_keep_loopback_and_take_any_port_unless_one_is_named() -> None:
    security = HttpSecurity.build(
        ServeSettings(allowed_hosts=["mcp.example.com", "edge.example.com:8443"])
    )
    settings = security.app_options("0.0.0.0")["transport_security"]
    assert settings is not None
    assert settings.enable_dns_rebinding_protection
    for host in ("127.0.0.1:*", "localhost:*", "mcp.example.com", "mcp.example.com:*"):
        assert host in settings.allowed_hosts
    assert "edge.example.com:8443" in settings.allowed_hosts
    assert "edge.example.com:8443:*" not in settings.allowed_hosts
    assert "https://mcp.example.com" in settings.allowed_origins
    default = HttpSecurity.build(ServeSettings()).app_options("127.0.0.1")
    assert default["transport_security"] is None  # the SDK's own loopback check


def test_an_oauth_issuer_or_resource_that_is_no_url_is_refused_before_serving() -> None:
    oauth = ServeOAuth(issuer="auth.example.com", jwks_url="x", resource="/mcp")
    with pytest.raises(ConfigError) as error:
        HttpSecurity.build(ServeSettings(oauth=oauth))
    assert error.value.problems == ("oauth: the issuer and the resource must be http(s) URLs",)
