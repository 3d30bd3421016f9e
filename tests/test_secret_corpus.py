"""Secrets are what is secret, measured over real configs: every config in ``configs/``, every
TOML and JSON block of the docs, and realistic host files (``tests/secret_corpus/``:
filesystem, git and sqlite servers with folders; GitHub, Slack, Postgres and search servers
with tokens and URLs).

Each config is loaded with a realistic value for every variable it refers to: a token of
its kind for a credential-like name, a path, URL, word or number otherwise. Then, for every
string a server is configured with (command, args, env and header values, cwd, url), the
server's redaction (`ServerBase.redact`, which hides exactly its secrets) must hide every
real credential in it and change nothing else: no false positive on a plain value.
"""

from __future__ import annotations

import importlib.util
import re
import secrets
import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

import pytest

from mcpmount.config import (
    HttpServer,
    ServerSpec,
    StdioServer,
    credential_name,
    input_variable,
    load_config,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "secret_corpus"

LITERAL_CREDENTIALS = [
    "ghp_R8tYq2LmX4vB9nK1pW7sZ3cD6fH0jA5gE2uT",
    "xoxb-2183749501-7720384619-Qm8ZxT4rLp2VbN6sWk0YhJd3",
    "Vq7%23mT2xLp9",
    "BSAx7kQ2mN9pL4vR8tW1zY6cF3hJ0dG5",
]
"""The credentials written in the corpus's host files themselves."""

HOST_ENVIRON = {
    "HOME": "/home/alex",
    "DATA": "/srv/data",
    "PROJECT_ROOT": "/home/alex/src/website",
    "NOTES_DIR": "/home/alex/notes",
    "XDG_CACHE_HOME": "/home/alex/.cache",
    "SLACK_TEAM": "T01AB2CD3EF",
    "DEPLOYMENT": "production-eu-west-1",
    "MODEL": "gpt-4o-mini-2024-07-18",
    "PORT": "8080",
    "OPENAI_BASE_URL": "https://api.openai.com/v1",
    "ORG_ID": "org-Ab12Cd34Ef56Gh78Ij90Kl12",  # plain by the file's not_secrets
    "GITHUB_TOKEN": "github_pat_11ABCDEFG0" + "x7Qm2Lp9Zk4w" * 5,
    "SLACK_BOT_TOKEN": "xoxb-9876543210-1234567890-aB3dE5gH7jK9mN1pQ3sT5vW7",
    "DATABASE_URL": "postgresql://shop:Kp4xq9Lm2Wz@db.example.com:5432/shop",
    "SEARCH_KEY": "Zx81Kq2Lm0Wp7Vn4Bt6Ry3",
    "SENTRY_AUTH": "sntrys_eyJpYXQiOjE3MDAwMDAwMDB9_k2Lm9Qx4Wp7Zt1Vb",
    "OPENAI_API_KEY": "sk-proj-" + "Qw3Er5Ty7Ui9Op1As" * 2,
    "LINEAR_API_KEY": "lin_api_7Hq2Lm9Xz4Wp1Vb8Nc3Rt6Yk0",
    "MCPMOUNT_INPUT_GITHUB_TOKEN": "ghp_Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8c",
}
HOST_CREDENTIALS = [
    *(HOST_ENVIRON[name] for name in HOST_ENVIRON if credential_name(name)),
    "Kp4xq9Lm2Wz",  # the DATABASE_URL's password, not the rest of the URL
    "Zx81Kq2Lm0Wp7Vn4Bt6Ry3",  # SEARCH_KEY: secret by where it is (an api_key query value)
]
"""Every real credential the host files get from the environment."""

_ALPHABET = string.ascii_letters + string.digits


def stand_in(name: str, credentials: list[str]) -> str:
    """A realistic value for the variable ``name``: a token when the name says credential
    (recorded in ``credentials``), else what such a name holds."""
    upper = name.upper()
    if credential_name(name):
        token = "".join(secrets.choice(_ALPHABET) for _ in range(32))
        value = f"ghp_{token[:36]}" if "GITHUB" in upper else token
        credentials.append(value)
        return value
    if any(word in upper for word in ("URL", "HOST", "ENDPOINT", "ISSUER")):
        return f"https://{name.lower().replace('_', '-')}.example.com/api"
    if any(word in upper for word in ("PORT", "LIMIT", "SIZE", "TIMEOUT", "COUNT")):
        return "8080"
    if any(word in upper for word in ("DIR", "PATH", "ROOT", "HOME", "FOLDER", "FILE", "DB")):
        return f"/home/alex/projects/{name.lower()}"
    return name.lower().replace("_", "-")


def environ_for(text: str, credentials: list[str]) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/alex"}
    for name in re.findall(r"\$\{(?:env:)?(\w+)", text):
        env.setdefault(name, stand_in(name, credentials))
    for found in re.findall(r"\$\{input:([^}]+)\}", text):
        env.setdefault(input_variable(found), stand_in(found, credentials))
    return env


def configured_strings(spec: ServerSpec) -> list[str]:
    """Every string ``spec`` is configured with that a server or a message may show."""
    if isinstance(spec, StdioServer):
        return [spec.command, *spec.args, *spec.env_values().values(), *filter(None, [spec.cwd])]
    assert isinstance(spec, HttpServer)
    return [spec.url, *spec.header_values().values(), *(spec.headers_command or [])]


def assert_exact(path: Path, environ: dict[str, str], credentials: list[str]) -> int:
    """Every credential hidden, nothing else changed; returns how many servers it checked."""
    config = load_config(path, environ=environ)
    for name, spec in config.servers.items():
        for text in configured_strings(spec):
            shown = spec.redact(text)
            carried = [c for c in credentials if c in text]
            for credential in carried:
                assert credential not in shown, f"{path.name}: {name}: a credential is shown"
            if not carried:
                assert shown == text, f"{path.name}: {name}: {text!r} taken for a secret"
    return len(config.servers)


def test_the_host_files_credentials_are_found_and_their_plain_values_kept() -> None:
    """Folders, databases, team IDs, model names, ports and URLs stay; tokens, API keys,
    URL passwords and an ``api_key`` query value are secrets."""
    credentials = [*LITERAL_CREDENTIALS, *HOST_CREDENTIALS]
    checked = 0
    for path in sorted(CORPUS.iterdir()):
        checked += assert_exact(path, HOST_ENVIRON, credentials)
    assert checked == 21
    plain_fs = load_config(CORPUS / "mcpmount.toml", environ=HOST_ENVIRON).servers["fs"]
    assert plain_fs.secret_values() == []  # ${DATA}/fs and ${HOME}/notes are folders


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_the_repositorys_configs_have_no_false_secret(path: Path) -> None:
    credentials: list[str] = []
    assert assert_exact(path, environ_for(path.read_text(), credentials), credentials) > 0


class Block(Protocol):
    """A fenced block of the docs, as tests/docs/docs_support.py finds them."""

    lang: str
    text: str
    marker: str | None

    @property
    def id(self) -> str: ...


def _every_block() -> list[Block]:
    """The docs' blocks, found by the docs tests' own machinery."""
    spec = importlib.util.spec_from_file_location(
        "secret_corpus_docs_support", Path(__file__).parent / "docs" / "docs_support.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cast("Callable[[], list[Block]]", module.every_block)()


DOC_BLOCKS = [
    block
    for block in _every_block()
    if block.lang in ("toml", "json")
    and block.marker != "output"
    and ("[servers." in block.text or '"mcpServers"' in block.text or '"servers"' in block.text)
]


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=[block.id for block in DOC_BLOCKS])
def test_the_docs_configs_have_no_false_secret(block: Block, tmp_path: Path) -> None:
    """Each block, loaded as the docs test loads it, with realistic values for its
    variables: their credentials are found, their paths and words are not secrets."""
    path = tmp_path / ("mcpmount.toml" if block.lang == "toml" else "mcp.json")
    path.write_text(block.text)
    credentials: list[str] = []
    assert_exact(path, environ_for(block.text, credentials), credentials)
