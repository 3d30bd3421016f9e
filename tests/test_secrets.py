"""A planted secret never surfaces: not in a repr, a log record, an error or the CLI's output.

The secret comes in through ``${VAR}`` into ``env`` and ``headers``; the fault server echoes
it on stderr, on stdout (a garbage line) and in its JSON-RPC error messages.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from http_fixture import serve_http
from leaks import record_group
from mcpmount.config import load_config
from mcpmount.errors import RegistryError, ServerStartError, UpstreamError
from mcpmount.registry import Registry
from servers.http_faults import StatusApp
from support import fixture_server, write_config

SECRET = "sk-planted-7f3a9c1e5b"
LISTING = '{"tools": [{"name": "anything", "inputSchema": {"type": "object"}}]}'

pytestmark = pytest.mark.usefixtures("no_leaks")


def leaky_config(tmp_path: Path, *flags: str, url: str = "http://127.0.0.1:9/mcp") -> str:
    """The fixture server with ``flags`` (``leaky``) and an HTTP server at ``url`` (``web``),
    both given the planted secret."""
    return write_config(
        tmp_path,
        fixture_server(
            "leaky", *flags, extra='env = { API_TOKEN = "${PLANTED}" }\nstartup_timeout = 5'
        ),
        f'[servers.web]\nurl = "{url}"\nrequired = false\n'
        'headers = { Authorization = "Bearer ${PLANTED}" }\n',
        name="servers.toml",
    )


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text


async def test_a_secret_never_appears_in_errors_reprs_or_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Start error, call error, stderr tail, reprs and every DEBUG log record are clean."""
    caplog.set_level(logging.DEBUG)
    environ = {"PLANTED": SECRET, "PATH": "/usr/bin:/bin"}
    async with serve_http(StatusApp(401, SECRET.encode())) as url:
        config = load_config(
            leaky_config(
                tmp_path, "--raw", "--list-json", LISTING, "--echo-env", "API_TOKEN", url=url
            ),
            environ=environ,
        )
        start_config = load_config(
            leaky_config(tmp_path, "--echo-env", "API_TOKEN", "--crash-on-start"), environ=environ
        )
        outputs: list[str] = [repr(config), repr(start_config), str(config.servers)]
        async with Registry(config.settings) as registry:
            with pytest.raises(ServerStartError) as started:
                await registry.mount("leaky", start_config.servers["leaky"])
            assert "fatal: bad config" in str(started.value)  # the tail is there, redacted
            outputs += [str(started.value), repr(started.value)]
            with pytest.raises(ServerStartError) as refused:
                await registry.mount("web", config.servers["web"])
            outputs += [str(refused.value), repr(refused.value)]
            await registry.mount("leaky", config.servers["leaky"])
            for row in registry.status():
                if row.pid is not None:
                    record_group(row.pid)
            with pytest.raises(UpstreamError) as called:
                await registry.call("leaky__anything", {})
            outputs += [str(called.value), repr(called.value), repr(registry.status())]
            outputs += [repr(registry), repr(registry.mounted_tools())]
    outputs += [record.getMessage() for record in caplog.records]
    outputs += [str(record.exc_info) for record in caplog.records if record.exc_info]
    assert_clean(*outputs)


def test_the_cli_never_prints_a_planted_secret(tmp_path: Path) -> None:
    """`mcpmount check` and `mcpmount tools` print no secret on stdout or stderr."""
    config = leaky_config(tmp_path, "--echo-env", "API_TOKEN", "--crash-on-start")
    env = {"PLANTED": SECRET, "PATH": "/usr/bin:/bin", "MCPMOUNT_STARTUP_TIMEOUT": "5"}
    for command in (["check", str(config)], ["tools", str(config)]):
        done = subprocess.run(
            [sys.executable, "-m", "mcpmount", *command],
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
            check=False,
        )
        if command[0] == "tools":  # lists what mounted, names the failure (the secret's path)
            assert "not mounted" in done.stderr, done.stderr
        assert_clean(done.stdout, done.stderr)


async def test_a_failed_initialize_carrying_the_secret_is_redacted(tmp_path: Path) -> None:
    """The server's own error text on initialize is redacted before it reaches the error."""
    config = load_config(
        leaky_config(tmp_path, "--raw", "--init-error", "--echo-env", "API_TOKEN"),
        environ={"PLANTED": SECRET},
    )
    async with Registry(config.settings) as registry:
        with pytest.raises(RegistryError) as caught:
            await registry.mount("leaky", config.servers["leaky"])
    assert "cannot start: token" in str(caught.value)
    assert_clean(str(caught.value))
