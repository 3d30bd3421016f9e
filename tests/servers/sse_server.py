"""The fixture server (echo, add, sleep, crash, ...) over legacy HTTP+SSE at /sse, as a process.

Run it as `python tests/servers/sse_server.py --portfile FILE`; it takes `fixture_server.py`'s
flags (`--name`, `--host`, `--port`, `--portfile`, ...).
"""

from __future__ import annotations

from fixture_server import build_mcpserver, parse_args, serve_http


def main() -> None:
    args = parse_args()
    serve_http(build_mcpserver(args.name, args.tools).sse_app(host=args.host), args)


if __name__ == "__main__":
    main()
