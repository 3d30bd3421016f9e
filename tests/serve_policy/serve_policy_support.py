"""Helpers for the policy tests: configs with a Cedar policy file and static tokens, and a
server with GitHub-like tool names.

Everything goes through a real `mcpmount serve --transport http` process (see
tests/serve/serve_support.py) and real SDK Clients with bearer tokens: static ones, and
JWTs of an issuer whose keys the test holds (`serve_auth.auth_support.Issuer`). Answers are
compared with the names blanked (`serve_isolation.isolation_support.blank`).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Final

from support import script_server

HERE: Final = Path(__file__).parent
GITHUB_SERVER: Final = HERE / "github_server.py"
ISOLATION_SERVER: Final = HERE.parent / "serve_isolation" / "isolation_server.py"

GITHUB_POLICY: Final = """\
// Every client may use GitHub's tools...
permit(principal, action, resource is Tool)
when { resource.name like "github__*" };

// ...but deleting is for admins: a token whose "role" claim says so.
forbid(principal, action, resource is Tool)
when { resource.name like "github__delete_*" }
unless { principal.hasTag("role") && principal.getTag("role").contains("admin") };
"""
"""The docs' example (docs/recipes/policy.md)."""

CI_TOKEN: Final = "ci-token-0123456789abcdef"
"""A static token named ``ci`` in the configs written here."""


def github(record: Path) -> str:
    """A config table mounting tests/serve_policy/github_server.py as ``github``."""
    return script_server(
        "github", str(GITHUB_SERVER), "--record", str(record), extra="required = true"
    )


def write_setup(
    tmp_path: Path, policy: str, *servers: str, tokens: dict[str, str] | None = None
) -> Path:
    """Write ``policy.cedar`` and a config naming it (with static ``tokens`` by name:
    default ``ci``), mounting ``servers``; return the config's path."""
    (tmp_path / "policy.cedar").write_text(policy)
    tables = [
        f'[serve.tokens.{name}]\ntoken = "{token}"\n'
        for name, token in (tokens or {"ci": CI_TOKEN}).items()
    ]
    config = tmp_path / "serve.toml"
    config.write_text(
        '[registry]\nstartup_timeout = 15\n\n[serve]\npolicy = "policy.cedar"\n\n'
        + "\n".join(tables)
        + "\n"
        + "\n".join(servers)
    )
    return config


def calls(record: Path) -> list[str]:
    """The calls a recording server received, in order."""
    return record.read_text().splitlines() if record.exists() else []


def close_to(name: str, visible: list[str]) -> list[str]:
    """What the registry suggests for an unknown ``name`` among ``visible`` names."""
    return difflib.get_close_matches(name, visible, n=3)
