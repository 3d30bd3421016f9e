"""The benchmark's server: one `echo` tool, over stdio or (with --http) streamable HTTP.

Both sides of the benchmark spawn this same script, so the server's own start-up and
per-call cost cancel out of the ratios. It imports nothing it does not need: over stdio,
uvicorn is never loaded.

    python tests/bench/echo_server.py                                # stdio
    python tests/bench/echo_server.py --http --portfile /tmp/port    # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    server = MCPServer("bench-echo", version="0.1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    return server


def serve_http(server: MCPServer, host: str, port: int, portfile: Path | None) -> None:
    import uvicorn

    # Bind and listen before announcing the port, so early connects queue in the backlog.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stalls
    sock.bind((host, port))
    sock.listen(128)
    if portfile is not None:
        tmp = portfile.with_name(portfile.name + ".tmp")
        tmp.write_text(f"{sock.getsockname()[1]}\n")
        tmp.replace(portfile)
    config = uvicorn.Config(
        server.streamable_http_app(host=host),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = OS-chosen (see --portfile)")
    parser.add_argument("--portfile", type=Path, help="write the bound port here once listening")
    args = parser.parse_args()
    server = build_server()
    if args.http:
        serve_http(server, args.host, args.port, args.portfile)
    else:
        server.run()


if __name__ == "__main__":
    main()
