"""An MCP server whose tool leaves a daemon behind, as a careless or hostile server would.

Run it as ``python tests/servers/daemonizing_server.py`` (stdio). Its tool
``daemonize(pidfile, stubborn=False)`` forks, the child calls ``setsid()`` (leaving the
server's session and process group) and forks again, and the grandchild, re-parented
away from the server once its parent exits, writes its pid to ``pidfile`` and lives on
for at most `LIFETIME` seconds, so a failed test cannot leave it forever. ``stubborn``
makes the daemon ignore SIGTERM. The tool answers with the daemon's pid.

``python tests/servers/daemonizing_server.py --now PIDFILE`` does the same outside MCP,
for a test's control run; ``gate_program.py`` calls `daemonize` too.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

LIFETIME = 60.0
"""The longest a daemon lives, in seconds."""


def daemonize(pidfile: Path, *, stubborn: bool = False) -> int:
    """Leave a daemon (setsid and a double fork) that writes its pid to ``pidfile``; return it."""
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            _be_a_daemon(pidfile, stubborn)
        os._exit(0)
    os.waitpid(child, 0)
    deadline = time.monotonic() + 10
    while not pidfile.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the daemon did not write its pid")
        time.sleep(0.01)
    return int(pidfile.read_text())


def _be_a_daemon(pidfile: Path, stubborn: bool) -> None:
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        tmp = pidfile.with_name(pidfile.name + ".tmp")
        tmp.write_text(str(os.getpid()))
        tmp.replace(pidfile)  # readers poll for it: complete or absent
        end = time.monotonic() + LIFETIME
        while time.monotonic() < end:
            time.sleep(0.1)
    finally:
        os._exit(0)


def main() -> None:
    if sys.argv[1:2] == ["--now"]:
        print(daemonize(Path(sys.argv[2])))
        return
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("daemonizing", version="0.1.0")

    @server.tool(name="daemonize")
    def daemonize_tool(pidfile: str, stubborn: bool = False) -> int:  # pyright: ignore[reportUnusedFunction]
        """Leave a daemon behind and return its pid."""
        return daemonize(Path(pidfile), stubborn=stubborn)

    server.run()


if __name__ == "__main__":
    main()
