"""Every place a ``${VAR}`` can carry a secret, with a planted one: the URL path (connect,
401, 500 and redirect errors), arguments echoed on stderr, a secret cut by the stderr tail,
and the warning for a secret-looking variable in ``args``."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import anyio
import pytest

from http_fixture import serve_http
from mcpmount.config import load_config
from mcpmount.errors import ServerStartError
from mcpmount.registry import Registry
from servers.http_faults import RedirectApp, StatusApp
from support import free_port

SECRET = "sk-path-4d8e2b9a1c7f"

pytestmark = pytest.mark.usefixtures("no_leaks")


def _config(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "servers.toml"
    path.write_text(f"[servers.s]\nstartup_timeout = 10\n{table}\n")
    return path


async def _start_error(path: Path) -> str:
    config = load_config(path, environ={"PLANTED": SECRET, "PATH": "/usr/bin:/bin"})
    async with Registry(config.settings) as registry:
        with pytest.raises(ServerStartError) as caught:
            await registry.mount("s", config.servers["s"])
    return str(caught.value)


@pytest.mark.parametrize("status", [401, 500])
async def test_a_secret_in_the_url_path_is_hidden_in_http_status_errors(
    tmp_path: Path, status: int
) -> None:
    """The error names the status and the URL, with the path's secret replaced."""
    async with serve_http(StatusApp(status, b"no", b"text/plain")) as url:
        base = url.rsplit("/", 1)[0]
        message = await _start_error(_config(tmp_path, f'url = "{base}/${{PLANTED}}/mcp"'))
    assert f"HTTP {status}" in message
    assert SECRET not in message
    assert "/***/mcp" in message


async def test_a_secret_in_the_url_path_is_hidden_when_nothing_listens(tmp_path: Path) -> None:
    """A refused connection names the URL without the secret."""
    url = f"http://127.0.0.1:{free_port()}/${{PLANTED}}/mcp"
    message = await _start_error(_config(tmp_path, f'url = "{url}"'))
    assert "cannot connect" in message
    assert SECRET not in message


async def test_a_secret_in_a_redirect_target_is_hidden(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused cross-origin redirect to a URL with the secret: our error and logs, and
    everything ``mcpmount -vv check`` prints, are clean."""
    caplog.set_level(logging.DEBUG, logger="mcpmount")
    async with serve_http(StatusApp(200, b"{}", b"application/json")) as other:
        target = other.rsplit("/", 1)[0] + f"/{SECRET}/mcp"
        async with serve_http(RedirectApp(target)) as url:
            base = url.rsplit("/", 1)[0]
            path = _config(tmp_path, f'url = "{base}/${{PLANTED}}/mcp"')
            message = await _start_error(path)
            done = await anyio.run_process(
                [sys.executable, "-m", "mcpmount", "-vv", "check", str(path)],
                env={**os.environ, "PLANTED": SECRET},
                check=False,
            )
    assert "not followed" in message
    assert SECRET not in message
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("mcpmount")]
    assert not [line for line in ours if SECRET in line]
    assert done.returncode == 1
    printed = (done.stdout + done.stderr).decode()
    assert "not followed" in " ".join(printed.split())
    assert SECRET not in printed


def _stderr_server(tmp_path: Path, script: str) -> Path:
    args = json.dumps(["-c", script, "${PLANTED}"])  # a JSON array is a TOML array
    return _config(tmp_path, f'command = "{sys.executable}"\nargs = {args}')


async def test_a_secret_passed_in_args_and_echoed_on_stderr_is_hidden(tmp_path: Path) -> None:
    """The server prints its argument on stderr and exits: the stderr tail hides it."""
    script = "import sys; print('fatal: token', sys.argv[1], 'refused', file=sys.stderr); exit(1)"
    message = await _start_error(_stderr_server(tmp_path, script))
    assert "fatal: token *** refused" in message
    assert SECRET not in message


async def test_a_secret_cut_by_the_stderr_tail_leaves_no_part_behind(tmp_path: Path) -> None:
    """The tail shows the last 1000 characters; the secret straddles that cut."""
    script = (
        "import sys; sys.stderr.write('A' * 2000 + sys.argv[1] + 'B' * 990 + '\\n'); "
        "sys.stderr.flush(); exit(1)"
    )
    message = await _start_error(_stderr_server(tmp_path, script))
    assert "BBBB" in message
    for size in (6, 8, 12):
        assert SECRET[-size:] not in message
        assert SECRET[:size] not in message


def test_a_secret_looking_variable_in_args_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``${GH_PAT}`` on the command line is readable by every local user: say so."""
    path = _config(tmp_path, 'command = "server"\nargs = ["--token", "${GH_PAT}"]')
    with caplog.at_level(logging.WARNING):
        load_config(path, environ={"GH_PAT": SECRET})
    assert "${GH_PAT}" in caplog.text
    assert "pass it in env instead" in caplog.text
    assert SECRET not in caplog.text
