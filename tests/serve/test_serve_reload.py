"""`mcpmount serve` reloads its config on SIGHUP and when the file changes: the client is
told the list changed and sees the new tools, an unchanged server keeps its process, and
a broken file is refused while serving goes on.

Both protocol eras: SIGHUP over handshake-era HTTP (``notifications/tools/list_changed``),
a file change over 2026-07-28 stdio (``ToolsListChanged`` on ``subscriptions/listen``).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client

from cli.cli_support import mcpmount
from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    connected,
    names,
    served_http,
    served_stdio,
    wait_for_tool,
    write_config,
)
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

FIRST = (fixture_server("keep"), fixture_server("grow", "--tools", "1"))
SECOND = (fixture_server("keep"), fixture_server("grow", "--tools", "2"), fixture_server("new"))


def rewrite(config: str, *servers: str) -> None:
    """Replace the config as an editor saving atomically does: a new file renamed over it."""
    path = Path(config)
    written = path.with_name(path.name + ".new")
    written.write_text("[registry]\nstartup_timeout = 15\n\n" + "\n".join(servers))
    os.replace(written, path)


async def pid_of(client: Client, server: str) -> str:
    return text_of(await client.call_tool(f"{server}__pid", {}))


async def test_sighup_reloads_and_a_handshake_era_client_is_told(tmp_path: Path) -> None:
    """--no-watch: the new file is applied by SIGHUP alone; the unchanged server's process
    is the same, the changed one has its new tool, the added one is served."""
    config = write_config(tmp_path, *FIRST)
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        nonlocal changed
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    async with (
        served_http(config, tmp_path, "--no-watch") as (url, process),
        connected(Client(url, mode="legacy", message_handler=on_message)) as client,
    ):
        await wait_for_tool(client, "grow__tool_0")
        kept = await pid_of(client, "keep")
        rewrite(config, *SECOND)
        changed = anyio.Event()
        process.send_signal(signal.SIGHUP)
        with anyio.fail_after(STARTUP):
            while not {"grow__tool_1", "new__echo"} <= set(names(await client.list_tools())):
                await changed.wait()
                changed = anyio.Event()
        with anyio.fail_after(BEHAVIOUR):
            assert await pid_of(client, "keep") == kept
            assert text_of(await client.call_tool("new__echo", {"text": "hi"})) == "hi"
        assert process.returncode is None  # SIGHUP reloads serve, never stops it


async def test_a_changed_file_reloads_and_a_broken_one_is_refused_2026_era(
    tmp_path: Path,
) -> None:
    """The file is watched: a broken save is logged and changes nothing; the next good save
    is applied, and the 2026-07-28 client hears of it on its listen stream."""
    config = write_config(tmp_path, *FIRST)
    log = tmp_path / "serve.log"
    async with served_stdio(config, tmp_path, mode="2026-07-28") as client:
        await wait_for_tool(client, "grow__tool_0")
        kept = await pid_of(client, "keep")
        before = names(await client.list_tools())
        rewrite(config, '[servers.keep]\ncommand = "x"\nargs = "not a list"\n')
        with anyio.fail_after(STARTUP):
            while "reload refused" not in log.read_text():
                await anyio.sleep(0.1)
        assert names(await client.list_tools()) == before
        async with client.listen(tools_list_changed=True) as events:
            rewrite(config, *SECOND)
            with anyio.fail_after(STARTUP):
                async for _ in events:
                    if {"grow__tool_1", "new__echo"} <= set(names(await client.list_tools())):
                        break
        with anyio.fail_after(BEHAVIOUR):
            assert await pid_of(client, "keep") == kept


async def test_a_new_lock_file_is_applied_and_mounts_the_server_it_approves(
    tmp_path: Path,
) -> None:
    """A server refused by the lock file (its tools differ from the pins) is mounted when
    a lock file that approves it is written beside the config (as ``mcpmount lock`` does):
    the watched lock file reloads, and only that server starts."""
    optional = 'required = false\non_change = "refuse"'
    config = write_config(
        tmp_path, fixture_server("keep"), fixture_server("pinned", "--tools", "1", extra=optional)
    )
    locked = await anyio.to_thread.run_sync(mcpmount, "lock", config)
    assert locked.returncode == 0, locked.stderr
    lock = tmp_path / "serve.lock"
    approved = lock.read_text()
    body = json.loads(approved)
    body["servers"]["pinned"] = dict.fromkeys(body["servers"]["pinned"], "0" * 32)
    lock.write_text(json.dumps(body))
    async with (
        served_http(config, tmp_path) as (url, _),
        connected(Client(url)) as client,
    ):
        await wait_for_tool(client, "keep__echo")
        assert not any(name.startswith("pinned__") for name in names(await client.list_tools()))
        kept = await pid_of(client, "keep")
        written = lock.with_name("serve.lock.new")
        written.write_text(approved)
        os.replace(written, lock)
        await wait_for_tool(client, "pinned__echo")
        with anyio.fail_after(BEHAVIOUR):
            assert await pid_of(client, "keep") == kept
