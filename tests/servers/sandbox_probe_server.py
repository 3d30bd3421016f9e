"""An MCP server that tries, on a call, what a sandbox must stop; each tool reports how it went.

- ``read(path)``: read a file (a private key planted in the user's home);
- ``write(path)``: create a file and write ``written`` into it;
- ``connect(port)``: open a TCP connection to ``127.0.0.1:port``;
- ``signal(pid)``: send SIGTERM to a process;
- ``leave_child(token)``: fork a helper that calls ``setsid()`` (leaving the server's
  process group) and sleeps with ``token`` on its command line, so a test can find it;
- ``fetch(url)``: GET a URL with urllib (which honours ``HTTP_PROXY``);
- ``tunnel(host, port)``: ``CONNECT host:port`` through ``$HTTPS_PROXY``, then GET ``/``;
- ``hold(host, port, count)``: open ``count`` tunnels through ``$HTTPS_PROXY`` one after
  another and keep those that open; ``release()`` closes them.

Every answer starts with ``ok:`` or ``failed:`` and says why. Standard library and the SDK
only. Run: ``python tests/servers/sandbox_probe_server.py`` (stdio).
"""

from __future__ import annotations

import os
import signal as signals
import socket
import sys
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer

server = MCPServer("sandbox-probe", version="1.0.0")


def _failed(exc: BaseException) -> str:
    return f"failed: {type(exc).__name__}: {exc}"


@server.tool()
def read(path: str) -> str:
    """Read the file at ``path``."""
    try:
        with open(path) as f:
            return "ok: " + f.read()
    except OSError as exc:
        return _failed(exc)


@server.tool()
def write(path: str) -> str:
    """Create the file at ``path`` holding ``written``."""
    try:
        with open(path, "w") as f:
            f.write("written")
    except OSError as exc:
        return _failed(exc)
    return "ok: written"


@server.tool()
def connect(port: int) -> str:
    """Connect to ``127.0.0.1:port`` and read what it says first."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            return "ok: " + sock.recv(100).decode()
    except OSError as exc:
        return _failed(exc)


@server.tool()
def signal(pid: int) -> str:
    """Send SIGTERM to ``pid``."""
    try:
        os.kill(pid, signals.SIGTERM)
    except OSError as exc:
        return _failed(exc)
    return "ok: signalled"


@server.tool()
def leave_child(token: str) -> str:
    """Fork a helper in a session of its own that sleeps with ``token`` in its argv."""
    try:
        child = os.fork()
    except OSError as exc:
        return _failed(exc)
    if child == 0:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", token])
    return f"ok: left pid {child}"


@server.tool()
def fetch(url: str) -> str:
    """GET ``url`` with urllib and return the body."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return "ok: " + response.read().decode()
    except urllib.error.HTTPError as exc:
        return f"failed: HTTP {exc.code}: {exc.read().decode().strip()}"
    except OSError as exc:
        return _failed(exc)


def _proxy_answer(sock: socket.socket) -> str:
    """The proxy's answer to a CONNECT: its head, and for a refusal its body too.

    The answer may arrive in several segments (it crosses the sandbox's relay), so the
    head is read to its blank line and a refusal, which the proxy closes, to its end.
    """
    answer = b""
    while b"\r\n\r\n" not in answer and (data := sock.recv(4096)):
        answer += data
    if not answer.startswith(b"HTTP/1.1 200"):
        while data := sock.recv(4096):
            answer += data
    return answer.decode()


@server.tool()
def tunnel(host: str, port: int) -> str:
    """Open a tunnel to ``host:port`` through ``$HTTPS_PROXY`` and GET ``/`` through it."""
    proxy = urlsplit(os.environ.get("HTTPS_PROXY", ""))
    if not proxy.hostname or not proxy.port:
        return "failed: no HTTPS_PROXY"
    try:
        with socket.create_connection((proxy.hostname, proxy.port), timeout=10) as sock:
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            answer = _proxy_answer(sock)
            if not answer.startswith("HTTP/1.1 200"):
                status, body = answer.split("\r\n", 1)[0], answer.partition("\r\n\r\n")[2]
                return f"failed: {status}: {body.strip()}"
            sock.sendall(f"GET / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            reply = b""
            while data := sock.recv(4096):
                reply += data
            return "ok: " + reply.decode().split("\r\n\r\n", 1)[-1]
    except OSError as exc:
        return _failed(exc)


_held: list[socket.socket] = []


@server.tool()
def hold(host: str, port: int, count: int) -> str:
    """Open ``count`` tunnels to ``host:port`` one by one; keep the open ones; say how it went."""
    proxy = urlsplit(os.environ.get("HTTPS_PROXY", ""))
    if not proxy.hostname or not proxy.port:
        return "failed: no HTTPS_PROXY"
    opened, refusals = 0, list[str]()
    for _ in range(count):
        try:
            sock = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
            sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            answer = _proxy_answer(sock)
        except OSError as exc:
            refusals.append(_failed(exc))
            continue
        if answer.startswith("HTTP/1.1 200"):
            _held.append(sock)
            opened += 1
        else:
            sock.close()
            refusals.append(answer.split("\r\n\r\n", 1)[-1].strip() or answer)
    first = refusals[0] if refusals else "-"
    return f"ok: {opened} open, {len(refusals)} refused; first refusal: {first}"


@server.tool()
def release() -> str:
    """Close the tunnels ``hold`` kept."""
    count = len(_held)
    while _held:
        _held.pop().close()
    return f"ok: closed {count}"


if __name__ == "__main__":
    server.run()
