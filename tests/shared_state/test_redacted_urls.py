"""Every URL mcpmount prints goes through one redaction: a Redis URL's password, in its
userinfo or in its query (``?password=``, which redis-py reads), and a server URL's
credential-like query values are never printed, and the keys are, so the reader can tell
which URL and which key.

Each test runs a real ``mcpmount`` process against a Redis that is not there (a Unix
socket nobody listens on), so that it says it cannot use it, naming the URL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import anyio
import pytest
from mcp import Client

from cli.cli_support import mcpmount
from http_fixture import serve_http
from serve.serve_support import changing, connected, served_http, wait_for_tool
from serve.serve_support import write_config as write_serve_config
from servers.http_faults import StatusApp
from support import fixture_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

SECRET: Final = "pw-7f3a9c1e5b"
"""The password in the query; must never be printed."""

USER_SECRET: Final = "pw-user-2d8b6e"
"""The password in the userinfo; must never be printed."""


def nobody_url(tmp_path: Path) -> str:
    """A Redis URL with both passwords, on a socket nobody listens on."""
    return f"unix://cache:{USER_SECRET}@{tmp_path}/nobody.sock?db=0&password={SECRET}"


def shown(tmp_path: Path) -> str:
    return f"unix://cache:***@{tmp_path}/nobody.sock?db=0&password=***"


def unwrapped(text: str) -> str:
    """``text`` without whitespace: rich wraps a long log line anywhere."""
    return "".join(text.split())


def test_tools_names_an_unusable_cache_url_without_its_passwords(tmp_path: Path) -> None:
    """The manifest cache's warning shows the URL with ``password=***``; the tools list."""
    head = f'[registry]\ncache = "{nobody_url(tmp_path)}"\n\n'
    config = write_config(tmp_path, head + fixture_server("fx", extra='start = "lazy"'))
    done = mcpmount("tools", config, "--json")
    assert done.returncode == 0, done.stderr
    assert "fx__echo" in done.stdout
    assert SECRET not in done.stderr + done.stdout
    assert USER_SECRET not in done.stderr + done.stdout
    assert f"manifestcacheat{unwrapped(shown(tmp_path))}cannotbeused" in unwrapped(done.stderr)


async def test_serve_names_an_unreachable_shared_state_without_its_passwords(
    tmp_path: Path,
) -> None:
    """``serve --shared-state`` says it serves alone, naming the URL, never a password."""
    config = write_serve_config(tmp_path, changing("live"))
    async with (
        served_http(config, tmp_path, "--shared-state", nobody_url(tmp_path)) as (url, _),
        connected(Client(url, mode="2026-07-28")) as client,
    ):
        await wait_for_tool(client, "live__grow")
        log = (tmp_path / "serve.log").read_text()
    assert SECRET not in log
    assert USER_SECRET not in log
    assert f"sharedstateat{unwrapped(shown(tmp_path))}cannotbeused:redisunreachable" in (
        unwrapped(log)
    )


async def test_a_server_url_is_shown_with_its_query_keys_and_no_credential(
    tmp_path: Path,
) -> None:
    """A url server's errors name its URL the same way: ``api_key=***``, the key kept."""
    async with serve_http(StatusApp(500, b"no", b"text/plain")) as url:
        table = f'[servers.api]\nurl = "{url}?api_key={SECRET}&v=2"\n'
        config = write_config(tmp_path, table)
        done = await anyio.to_thread.run_sync(mcpmount, "check", config, "--json")
    assert done.returncode == 1, done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert f"HTTP 500 from {url}?api_key=***&v=2" in done.stdout
