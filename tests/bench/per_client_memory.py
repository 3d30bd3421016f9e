"""What ``sessions = "per_client"`` costs in memory: 100 clients through `mcpmount serve`.

`mcpmount serve --transport http` mounts the stateful test server
(tests/serve_sessions/sessions_server.py) twice, both ``per_client``: as ``local`` over
stdio (a process per client) and as ``web`` over streamable HTTP (one process the bench
runs; an HTTP session per client). Then, for each in turn, 100 SDK clients connect, each
calls one tool (which opens its own upstream session), and all stay connected while the
memory is read: serve's resident set (RSS), the total RSS and PSS (proportional: shared
pages split among their users) of serve's child processes, and the RSS of the HTTP
server. The clients then leave (each `DELETE` closes its upstream session) and the bench
waits until serve's children are back to the shared ones. Figures at 0 and 100 clients,
and per client; exit 1 when serve grew by more than `BUDGET_KIB` per client. Run it from
the repository root:

    python tests/bench/per_client_memory.py     # a few minutes on 2 cores
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import anyio
import anyio.abc
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT: Final = Path(__file__).resolve().parents[2]
SERVER: Final = ROOT / "tests" / "serve_sessions" / "sessions_server.py"
CLIENTS: Final = 100
AT_ONCE: Final = 8
"""Clients connecting (and opening their upstream sessions) at the same time."""
STARTUP: Final = 120.0
SETTLE: Final = 120.0
BUDGET_KIB: Final = 1536
"""What one client's upstream session may add to serve's RSS (docs/serve.md states it);
over it, the bench exits 1. The server's own process (stdio) is the server's cost."""


def _status(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` (or ``smaps_rollup``) figure in KiB; 0 if it is gone."""
    name = "smaps_rollup" if field == "Pss:" else "status"
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(stat.parent.name))
    found: list[int] = []
    stack = [pid]
    while stack:
        kids = parents.get(stack.pop(), [])
        found += kids
        stack += kids
    return found


def measure(serve: int, upstream: int) -> dict[str, float]:
    """Memory now, in MiB: serve, its children (RSS and PSS), the HTTP server."""
    children = _descendants(serve)
    return {
        "serve_rss": _status(serve, "VmRSS:") / 1024,
        "children": len(children),
        "children_rss": sum(_status(pid, "VmRSS:") for pid in children) / 1024,
        "children_pss": sum(_status(pid, "Pss:") for pid in children) / 1024,
        "upstream_rss": _status(upstream, "VmRSS:") / 1024,
    }


async def _start(command: list[str], portfile: Path, log: Path) -> tuple[anyio.abc.Process, int]:
    with log.open("w") as errlog:
        process = await anyio.open_process(
            command, stdout=subprocess.DEVNULL, stderr=errlog, start_new_session=True
        )
    with anyio.fail_after(STARTUP):
        while (port := _port(portfile)) is None:
            if process.returncode is not None:
                raise SystemExit(f"{command} exited; see {log}")
            await anyio.sleep(0.05)
    return process, port


def _port(portfile: Path) -> int | None:
    text = portfile.read_text().strip() if portfile.exists() else ""
    return int(text) if text else None


async def _stop(process: anyio.abc.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    with anyio.move_on_after(30):
        await process.wait()
        return
    process.kill()
    await process.wait()


async def with_clients(
    url: str, tool: str, count: int, hold: Callable[[], Awaitable[None]]
) -> None:
    """Connect ``count`` clients, each calling ``tool`` once; run ``hold`` while all are
    connected; then close them all."""
    limiter = anyio.Semaphore(AT_ONCE)
    connected = anyio.Event()
    done = anyio.Event()
    ready = 0

    async def one(index: int) -> None:
        nonlocal ready
        async with httpx2.AsyncClient(timeout=STARTUP) as http:
            client = Client(streamable_http_client(url, http_client=http), mode="legacy")
            async with limiter:
                await client.__aenter__()
                try:
                    await client.call_tool(tool, {"path": f"/client/{index}"})
                except BaseException:
                    await client.__aexit__(None, None, None)
                    raise
            try:
                ready += 1
                if ready == count:
                    connected.set()
                await done.wait()
            finally:
                await client.__aexit__(None, None, None)

    async with anyio.create_task_group() as tg:
        for index in range(count):
            tg.start_soon(one, index)
        with anyio.fail_after(STARTUP * 4):
            await connected.wait()
        await hold()
        done.set()


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="mcpmount-per-client-") as tmp:
        work = Path(tmp)
        upstream, web_port = await _start(
            [sys.executable, str(SERVER), "--http", "--portfile", str(work / "web.port")],
            work / "web.port",
            work / "web.log",
        )
        config = work / "serve.toml"
        common = f'protocol = "legacy"\nsessions = "per_client"\nmax_client_sessions = {CLIENTS}\n'
        config.write_text(
            "[registry]\nstartup_timeout = 60\ncall_timeout = 120\n\n"
            f'[servers.local]\ncommand = "{sys.executable}"\n'
            f"args = {json.dumps([str(SERVER)])}\n{common}\n"
            f'[servers.web]\nurl = "http://127.0.0.1:{web_port}/mcp"\n{common}'
        )
        serve, port = await _start(
            [
                sys.executable,
                "-m",
                "mcpmount",
                "serve",
                str(config),
                "--transport",
                "http",
                "--port",
                "0",
                "--portfile",
                str(work / "serve.port"),
            ],
            work / "serve.port",
            work / "serve.log",
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            async with Client(url, mode="legacy") as probe:  # serve answers once mounted
                await probe.list_tools()
            kept = await report(url, serve.pid, upstream.pid)
        finally:
            await _stop(serve)
            await _stop(upstream)
    if not kept:
        raise SystemExit(1)


async def report(url: str, serve: int, upstream: int) -> bool:
    """Print the figures of each kind of server; return whether serve kept to the budget."""
    kept = True
    for server, what in (
        ("local", "stdio: a process per client"),
        ("web", "http: a session per client"),
    ):
        before = measure(serve, upstream)
        during: dict[str, float] = {}

        async def hold(into: dict[str, float] = during) -> None:
            into.update(measure(serve, upstream))

        await with_clients(url, f"{server}__cd", CLIENTS, hold)
        with anyio.fail_after(SETTLE):
            while measure(serve, upstream)["children"] > before["children"]:
                await anyio.sleep(0.2)
        after = measure(serve, upstream)
        print(f"{server} ({what}), {CLIENTS} clients:")
        for key in ("serve_rss", "children_rss", "children_pss", "upstream_rss"):
            per = (during[key] - before[key]) * 1024 / CLIENTS
            print(
                f"  {key:<13} 0: {before[key]:8.1f} MiB  {CLIENTS}: {during[key]:8.1f} MiB  "
                f"per client: {per:7.0f} KiB  (after they left: {after[key]:.1f} MiB)"
            )
        print(f"  child processes: {before['children']:.0f} -> {during['children']:.0f}")
        per_client = (during["serve_rss"] - before["serve_rss"]) * 1024 / CLIENTS
        kept = kept and per_client <= BUDGET_KIB
    print(
        f"budget: serve grows by at most {BUDGET_KIB} KiB per client: {'kept' if kept else 'OVER'}"
    )
    return kept


if __name__ == "__main__":
    anyio.run(main)
