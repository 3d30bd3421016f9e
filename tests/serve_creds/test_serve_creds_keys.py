"""The key principals' tokens are sealed with: required where the config is read, never
shown, rotated by listing a new one first; a record sealed with another key is no login."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from mcp.shared.auth import OAuthToken
from serve_creds_support import config_text, files_hold

from mcpmount.auth import SealedTokens, Sealer

_URL = "http://127.0.0.1:9/mcp"
_TOKEN = "an-access-token-that-must-never-be-kept-in-the-clear"


def _check(config: Path, key: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MCPMOUNT_TOKEN_KEY"}
    env |= {"MCPMOUNT_TOKEN_KEY": key} if key is not None else {}
    command = [sys.executable, "-m", "mcpmount", "check", str(config)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("key", [None, "not-a-key"])
def test_check_says_what_to_set_when_the_key_is_missing_or_malformed(
    tmp_path: Path, key: str | None
) -> None:
    """``mcpmount check`` fails naming the server, the variable and how to make a key."""
    config = tmp_path / "mcpmount.toml"
    config.write_text(config_text(_URL, "per_principal"))
    done = _check(config, key)
    said = " ".join(done.stderr.split())  # rich wraps lines
    assert done.returncode != 0
    assert "tracker" in said
    assert "MCPMOUNT_TOKEN_KEY" in said
    assert "Fernet.generate_key()" in said
    assert "not-a-key" not in said
    # Shared credentials need no key: the same config without per_principal reads fine.
    config.write_text(config_text(_URL, "shared"))
    assert "MCPMOUNT_TOKEN_KEY" not in _check(config, key).stderr


async def test_a_login_is_sealed_readable_with_its_key_and_a_rotated_one_only(
    tmp_path: Path,
) -> None:
    """The file holds neither the token nor the principal; another key reads no login; a
    new key listed first still opens what the old one sealed."""
    old, new, other = (Fernet.generate_key().decode() for _ in range(3))
    login = SealedTokens("alice", Sealer(old), tmp_path).login(_URL, None)
    login.use("http://127.0.0.1:9")
    await login.set_tokens(OAuthToken(access_token=_TOKEN, token_type="Bearer"))
    assert files_hold(tmp_path, _TOKEN) == []
    assert files_hold(tmp_path, "alice") == []

    def tokens(key: str) -> OAuthToken | None:
        return SealedTokens("alice", Sealer(key), tmp_path).login(_URL, None).tokens()

    for opening in (old, f"{new},{old}"):
        found = tokens(opening)
        assert found is not None
        assert found.access_token == _TOKEN
    assert tokens(other) is None
    bob = SealedTokens("bob", Sealer(old), tmp_path).login(_URL, None)
    assert bob.tokens() is None  # the same server, another principal: no login
