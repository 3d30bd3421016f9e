"""Secrets are what is secret: a folder a server is configured with (``${DATA}/fs``, an
``env`` path) is no secret, so a call on a path under it goes through and its result is not
redacted; a token-named variable or a token-shaped value still is; ``secrets`` and
``not_secrets`` settle the doubtful cases, and name only variables the server uses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcpmount
from mcpmount.errors import ConfigError, SecretRefusedError
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

THIEF = json.dumps(str(SERVERS / "token_thief_server.py"))
ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/alex",
    "DATA": "/srv/data",
    "SHOP_DB": "postgresql://shop:Kp4xq9Lm2Wz@db.example.com/shop",
    "TEAM": "T01AB2CD3EF",
    "RELEASE": "Zx81Kq2Lm0Wp7Vn4Bt6Ry3",
}


def config(tmp_path: Path, fs_extra: str = "") -> mcpmount.RegistryConfig:
    path = tmp_path / "mcpmount.toml"
    path.write_text(
        f'[servers.fs]\ncommand = "{sys.executable}"\n'
        f'args = [{THIEF}, "${{DATA}}/fs", "${{HOME}}/notes"]\n'
        'env = { ROOT = "${DATA}/fs", NOTES = "${HOME}/notes", TEAM = "${TEAM}", '
        'DB = "${SHOP_DB}", RELEASE = "${RELEASE}" }\n'
        f"{fs_extra}\n"
        f'[servers.git]\ncommand = "{sys.executable}"\nargs = [{THIEF}]\n'
    )
    return mcpmount.load_config(path, environ=ENVIRON)


async def test_a_path_under_a_servers_folder_is_no_secret(tmp_path: Path) -> None:
    """``git`` gets a path under ``fs``'s folder and a team ID, and its answer comes back
    as it was; ``fs``'s database password is refused, and redacted where it shows."""
    async with mcpmount.open_registry(config(tmp_path)) as registry:
        path = "/srv/data/fs/notes/todo.md and /home/alex/notes in team T01AB2CD3EF"
        said = await registry.call("git__echo", {"text": path})
        with pytest.raises(SecretRefusedError) as refused:
            await registry.call("git__echo", {"text": "Kp4xq9Lm2Wz"})
        with pytest.raises(SecretRefusedError):  # token-shaped, whatever its name
            await registry.call("git__echo", {"text": "release Zx81Kq2Lm0Wp7Vn4Bt6Ry3"})
        own = await registry.call("fs__echo", {"text": "pw Kp4xq9Lm2Wz"})
    assert text_of(said) == path
    assert refused.value.owner == "fs"
    assert text_of(own) == "pw [redacted: secret of server 'fs']"


async def test_secrets_and_not_secrets_settle_doubtful_values(tmp_path: Path) -> None:
    """``not_secrets`` frees a token-shaped value; ``secrets`` guards a plain one."""
    extra = 'secrets = ["TEAM"]\nnot_secrets = ["RELEASE"]'
    async with mcpmount.open_registry(config(tmp_path, extra)) as registry:
        freed = await registry.call("git__echo", {"text": "Zx81Kq2Lm0Wp7Vn4Bt6Ry3"})
        with pytest.raises(SecretRefusedError):
            await registry.call("git__echo", {"text": "team T01AB2CD3EF"})
    assert text_of(freed) == "Zx81Kq2Lm0Wp7Vn4Bt6Ry3"


def test_secrets_names_only_what_the_server_uses(tmp_path: Path) -> None:
    """A name the server's table neither expands nor sets is a problem, with a hint."""
    with pytest.raises(ConfigError) as caught:
        config(tmp_path, 'secrets = ["TEAMS"]\nnot_secrets = ["XYZZY"]')
    assert caught.value.problems == (
        "servers.fs.secrets[0]: no variable, env key or header of this server is called so; "
        "did you mean 'TEAM'?",
        "servers.fs.not_secrets[0]: no variable, env key or header of this server is called so",
    )
