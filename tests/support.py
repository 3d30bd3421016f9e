"""Small helpers shared by the test modules: fixture-server paths, stdio specs, pid checks,
free ports and config files."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.abc
import mcp_types

from leaks import record_group
from mcpmount.config import StdioServer
from mcpmount.registry import Registry

SERVERS = Path(__file__).parent / "servers"
FIXTURE = str(SERVERS / "fixture_server.py")
CHANGING = str(SERVERS / "changing_server.py")


def stdio_spec(script: str = FIXTURE, *flags: str, **options: Any) -> StdioServer:
    """A stdio spec running ``script`` with ``flags`` under this interpreter."""
    return StdioServer(command=sys.executable, args=[script, *flags], **options)


def fixture(*flags: str, **options: Any) -> StdioServer:
    """A stdio spec for the fixture server with ``flags``."""
    return stdio_spec(FIXTURE, *flags, **options)


_COUNTING = 'echo $$ >> "$0"; exec "$@"'
"""A shell script: append its pid to the file named by $0, then become the server."""


def counted_fixture(spawns: Path, *flags: str, **options: Any) -> StdioServer:
    """A stdio spec for the fixture server whose every spawn appends a line to ``spawns``
    (`spawn_count` counts them)."""
    args = ["-c", _COUNTING, str(spawns), sys.executable, FIXTURE, *flags]
    return StdioServer(command="/bin/sh", args=args, **options)


def spawn_count(spawns: Path) -> int:
    """How many times a `counted_fixture` has been spawned."""
    return len(spawns.read_text().splitlines()) if spawns.exists() else 0


def text_of(result: mcp_types.CallToolResult) -> str:
    """The concatenated text blocks of a tool result."""
    return "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def strings_in(value: object) -> str:
    """Every string of a JSON value, keys too, joined: where a hidden character can hide
    (JSON text itself writes controls as escapes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        items = cast("dict[str, object]", value).items()
        return "".join(key + strings_in(item) for key, item in items)
    if isinstance(value, list):
        return "".join(strings_in(item) for item in cast("list[object]", value))
    return ""


def record_pids(registry: Registry) -> None:
    """Record each mounted server's process group with the leak checker."""
    for row in registry.status():
        if row.pid is not None:
            record_group(row.pid)


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (read from /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now: for a server that must know its URL
    before it binds, or a URL that must be refused. Another process may take it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def script_server(name: str, script: str, *args: str, extra: str = "") -> str:
    """A config table mounting the Python script ``script`` (run with ``args`` by this
    interpreter) as ``name``; ``extra`` holds more lines of the table."""
    argv = json.dumps([script, *args])
    return f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {argv}\n{extra}\n'


def fixture_server(name: str, *flags: str, extra: str = "") -> str:
    """A config table for the fixture server with ``flags``, mounted as ``name``."""
    return script_server(name, FIXTURE, *flags, extra=extra)


def write_config(
    folder: Path, *tables: str, registry: str = "", serve: str = "", name: str = "mcpmount.toml"
) -> str:
    """Write a config file, ``folder / name``: a ``[registry]`` table of ``registry``'s lines
    and a ``[serve]`` one of ``serve``'s (each only if given), then ``tables`` (TOML text
    each, e.g. `fixture_server`'s). Returns its path as a command line takes it."""
    heads = [
        f"[{table}]\n{lines}\n"
        for table, lines in (("registry", registry), ("serve", serve))
        if lines
    ]
    path = folder / name
    path.write_text("\n".join([*heads, *tables]))
    return str(path)


async def port_written(
    portfile: Path, process: anyio.abc.Process, log: Path, wait: float, path: str = "/mcp"
) -> str:
    """The URL (``http://127.0.0.1:PORT`` and ``path``) of a server that writes the port it
    listens on to ``portfile``, once it has, within ``wait`` seconds; fails with ``log``
    (its stderr) if the process exits first."""
    written = anyio.Path(portfile)
    with anyio.fail_after(wait):
        while not (await written.exists() and (port := (await written.read_text()).strip())):
            if process.returncode is not None:
                said = await anyio.Path(log).read_text()
                raise AssertionError(f"exited {process.returncode} before listening: {said}")
            await anyio.sleep(0.02)
    return f"http://127.0.0.1:{port}{path}"


@asynccontextmanager
async def portfile_process(
    command: Sequence[str],
    portfile: Path,
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    path: str = "/mcp",
    stdout: int = subprocess.DEVNULL,
    start: float = 40.0,
    stop: float = 20.0,
) -> AsyncGenerator[tuple[str, anyio.abc.Process]]:
    """Run ``command`` (a server that writes its port to ``portfile``) in a process group of
    its own, in ``env`` (else this process's environment), its stderr to ``log`` and its
    stdout to ``stdout`` (``subprocess.PIPE`` to read it); yield its URL (ending in
    ``path``) and process once it listens (within ``start`` seconds); SIGTERM it at the end
    and wait ``stop`` seconds for it to exit."""
    with log.open("w") as errlog:
        process = await anyio.open_process(
            list(command),
            stdout=stdout,
            stderr=errlog,
            start_new_session=True,
            env=env,
        )
    record_group(process.pid)
    async with process:
        try:
            yield await port_written(portfile, process, log, start, path), process
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            with anyio.fail_after(stop):
                await process.wait()
