"""Where no sandbox can be made, ``run_code`` is not offered, and a call of it is answered
with what to install: the program never runs unsandboxed.

The sandbox is bubblewrap, found on ``PATH``: a ``PATH`` without it is a machine without
it. The same registry (or serve) with bwrap on its ``PATH`` lists and runs the program.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from codemode_e2e_support import CODE_ON, code_settings, fixture_table, output
from mcp import Client

from mcpmount.codemode import RUN_CODE_NAME
from mcpmount.registry import Registry
from serve.serve_support import connected, names, served_http
from support import fixture

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

PROGRAM = "from tools import pub\nprint('ran', pub.echo(text='hi'))"


def _without_bwrap(tmp_path: Path) -> str:
    """A ``PATH`` that has no bwrap (an empty folder)."""
    assert shutil.which("bwrap") is not None, "the differential half needs bwrap installed"
    empty = tmp_path / "bin"
    empty.mkdir()
    return str(empty)


@pytest.mark.slow
async def test_without_bwrap_run_code_is_not_listed_and_a_call_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unlisted, and refused with the install hint, nothing printed; with bwrap back on the
    ``PATH``, the same registry lists it and runs the same program."""
    async with Registry(code_settings()) as registry:
        await registry.mount("pub", fixture())
        with monkeypatch.context() as patched:
            patched.setenv("PATH", _without_bwrap(tmp_path))
            listed = [tool.name for tool in registry.tools()]
            refused = await registry.call(RUN_CODE_NAME, {"code": PROGRAM})
        assert RUN_CODE_NAME not in listed
        assert refused.is_error
        assert "never runs unsandboxed" in output(refused)
        assert "bubblewrap" in output(refused)
        assert "ran" not in output(refused)
        assert RUN_CODE_NAME in [tool.name for tool in registry.tools()]
        ran = await registry.call(RUN_CODE_NAME, {"code": PROGRAM})
    assert not ran.is_error, output(ran)
    assert output(ran).startswith("ran")


@pytest.mark.slow
async def test_a_serve_without_bwrap_refuses_run_code(tmp_path: Path) -> None:
    """A serve whose ``PATH`` lacks bwrap lists no ``run_code`` and refuses a call of it."""
    config = tmp_path / "serve.toml"
    config.write_text(f"{CODE_ON}\n" + fixture_table("pub"))
    env = {**os.environ, "PATH": _without_bwrap(tmp_path)}
    async with (
        served_http(str(config), tmp_path, env=env) as (url, _),
        connected(Client(url, mode="legacy", cache=None)) as client,
    ):
        listed = names(await client.list_tools())
        refused = await client.call_tool(RUN_CODE_NAME, {"code": PROGRAM})
    assert "pub__echo" in listed
    assert RUN_CODE_NAME not in listed
    assert refused.is_error
    assert "never runs unsandboxed" in output(refused)
    assert "bubblewrap" in output(refused)
