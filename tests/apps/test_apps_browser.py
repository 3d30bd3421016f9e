"""A real MCP App from npm, rendered through `mcpmount serve` in a real headless chromium.

server-basic-vanillajs (pinned in tests/apps/package.json) is mounted as ``clock``; the host
page (tests/apps/host/) is the ext-apps SDK's host side, the AppBridge, given the MCP
TypeScript client connected to serve over HTTP, as the SDK's example host does it. It reads
the view its tool names, renders it in a sandboxed iframe and sends it the tool's result;
drive.mjs then clicks the view's "Get Server Time", whose ``tools/call`` names the tool as
the server registered it (``get-time``), and waits for the answer to show in the view.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apps_support import basic_app, drive
from mcp import Client

from serve.serve_support import connected, served_http, wait_for_tool, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")


async def test_a_view_rendered_through_serve_calls_its_own_servers_tool(tmp_path: Path) -> None:
    """chromium renders the view under the ``ui://`` URI its tool names, and the view's own
    call (by the raw name) reaches its server through serve and shows the answer."""
    config = write_config(tmp_path, basic_app("clock"))
    async with served_http(config, tmp_path) as (url, _):
        async with connected(Client(url, mode="legacy")) as client:
            await wait_for_tool(client, "clock__get-time")
        report = await drive(url, tmp_path)
    host = report["host"]
    assert host["phase"] == "rendered", f"{host.get('error')}\n" + "\n".join(report["console"])
    assert host["tool"] == "clock__get-time"
    assert host["uri"] == host["contentUri"] == "ui://clock/get-time/mcp-app.html"
    assert report["sentByApp"] == [{"method": "tools/call", "name": "get-time"}]
    assert ISO_TIME.fullmatch(report["before"]), report["before"]
    assert ISO_TIME.fullmatch(report["after"]), report["after"]  # not "[ERROR]"
    assert report["after"] != report["before"]
