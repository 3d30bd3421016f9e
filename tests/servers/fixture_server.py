"""One configurable MCP server for tests: each flag injects one behaviour or fault.

Run it as `python tests/servers/fixture_server.py [flags]` (stdio by default). The default is an
`MCPServer` named "fixture" with echo/add/sleep/fail/big/pid/crash. `--lowlevel` swaps in a
low-level `Server` that lists arbitrary raw tool dicts (hostile names, bad schemas, pagination).
`--raw` swaps in a hand-rolled JSON-RPC loop (no SDK) that sends `--list-json` bytes verbatim
as the tools/list result (lone surrogates, invalid UTF-8, nesting pydantic cannot parse) and
can ignore `server/discover` like a server that predates it.
Pre-serve faults (garbage, floods, helpers, delays) run in the order the flags are listed below.
The SDK is imported only when it is needed, so the fault modes start fast.
In the 2026-07-28 era its lists say anyone may keep them for a day (``ttlMs``, ``cacheScope``),
as a server meant to start lazily behind a cache would; ``--cache-hint 0:private`` is what
mcp 2.3.0's servers say unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import CacheHint, Server, ServerRequestContext
    from mcp.server.caching import CacheableMethod
    from mcp.server.mcpserver import MCPServer
    from starlette.applications import Starlette


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--name", default="fixture", help="server name reported in serverInfo")
    p.add_argument("--tools", type=int, default=0, metavar="N", help="add tool_0..tool_{N-1}")
    p.add_argument("--crash-on-start", action="store_true", help="stderr reason, exit 1")
    p.add_argument(
        "--echo-env",
        metavar="NAME",
        help="print $NAME on stderr and stdout first; --raw also puts it in error answers",
    )
    p.add_argument(
        "--garbage",
        type=int,
        default=0,
        metavar="LINES",
        nargs="?",
        const=3,
        help="write non-JSON lines to stdout before serving (default 3)",
    )
    p.add_argument("--bad-utf8", action="store_true", help="write an invalid UTF-8 line first")
    p.add_argument(
        "--huge-line",
        type=float,
        default=0,
        metavar="MB",
        help="write one MB-long non-JSON stdout line before serving",
    )
    p.add_argument(
        "--stderr-flood",
        type=float,
        default=0,
        metavar="MB",
        help="write MB mebibytes to stderr before serving",
    )
    p.add_argument("--flood-no-newlines", action="store_true", help="flood as one long line")
    p.add_argument("--spawn-helper", action="store_true", help="start a `sleep 300` helper")
    p.add_argument("--helper-setsid", action="store_true", help="the helper leaves our group")
    p.add_argument(
        "--helper-close-fds",
        action="store_true",
        help="helper gets /dev/null stdio (default: it inherits our stdio pipes)",
    )
    p.add_argument("--pidfile", type=Path, help='write lines "server PID" and "helper PID"')
    p.add_argument("--ignore-term", action="store_true", help="SIG_IGN for SIGTERM")
    p.add_argument("--startup-delay", type=float, default=0, metavar="S", help="sleep S first")
    p.add_argument("--no-init", action="store_true", help="read stdin, never answer")
    p.add_argument("--ignore-eof", action="store_true", help="keep running after stdin EOF")
    p.add_argument("--lowlevel", action="store_true", help="low-level Server with --raw-tools")
    p.add_argument(
        "--raw-tools",
        metavar="JSON_OR_FILE",
        help="JSON list of raw tool dicts (or a path to one); implies --lowlevel",
    )
    p.add_argument(
        "--names",
        metavar="JSON_OR_FILE",
        help="JSON list of tool names (or a path to one); implies --lowlevel",
    )
    p.add_argument("--page-size", type=int, default=0, metavar="K", help="paginate tools/list")
    p.add_argument("--loop-cursor", action="store_true", help="nextCursor never changes")
    p.add_argument("--raw", action="store_true", help="hand-rolled JSON-RPC loop, no SDK")
    p.add_argument(
        "--list-json",
        metavar="JSON_OR_FILE",
        help="--raw: the tools/list result, sent verbatim (a file is read as bytes)",
    )
    p.add_argument("--no-discover", action="store_true", help="--raw: never answer discover")
    p.add_argument(
        "--init-error", action="store_true", help="--raw: answer initialize with an error"
    )
    p.add_argument(
        "--cache-hint",
        default="86400000:public",
        metavar="TTL_MS:SCOPE",
        help="ttlMs and cacheScope of every list (2026-07-28 era; default: a day, public)",
    )
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 = OS-chosen (see --portfile)")
    p.add_argument("--portfile", type=Path, help="write the bound port here once listening")
    args = p.parse_args(argv)
    if args.raw_tools or args.names:
        args.lowlevel = True
    return args


def write_atomically(path: Path, text: str) -> None:
    """Readers poll for the file, so it must appear complete or not at all."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def load_json(value: str) -> Any:
    return json.loads(value if value.lstrip()[:1] in "[{" else Path(value).read_text())


def cache_hints(value: str) -> dict[CacheableMethod, CacheHint]:
    """``TTL_MS:SCOPE`` as the hint of every list method."""
    from mcp.server import CacheHint

    ttl, _, scope = value.partition(":")
    hint = CacheHint(int(ttl), "public" if scope == "public" else "private")
    lists: tuple[CacheableMethod, ...] = (
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    )
    return dict.fromkeys(lists, hint)


# --- default server ------------------------------------------------------------------------


def build_mcpserver(
    name: str = "fixture", extra_tools: int = 0, cache_hint: str | None = None
) -> MCPServer:
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    hints = cache_hints(cache_hint) if cache_hint is not None else None
    server = MCPServer(
        name, version="0.1.0", instructions="Test fixture server.", cache_hints=hints
    )

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then say so (cancellable)."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def fail(message: str) -> str:
        """Always fail with an isError result carrying the message."""
        raise ToolError(message)

    @server.tool()
    def big(n: int) -> str:
        """Return n bytes of text."""
        return "x" * n

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    async def crash() -> str:
        """Exit the process with code 3 after 0.1 s, mid-call."""
        await anyio.sleep(0.1)
        os._exit(3)

    def make_extra(i: int) -> Callable[[int], str]:
        def extra(x: int = 0) -> str:
            return f"tool_{i}:{x}"

        return extra

    for i in range(extra_tools):
        server.add_tool(make_extra(i), name=f"tool_{i}", description=f"Extra tool {i}.")
    return server


# --- low-level server with raw tool dicts --------------------------------------------------


def raw_tool(d: dict[str, Any]) -> types.Tool:
    """Validate when possible; otherwise send the dict as is (missing or non-dict schema)."""
    import mcp_types as types

    try:
        return types.Tool.model_validate(d)
    except ValueError:
        return types.Tool.model_construct(**d)


def build_lowlevel(args: argparse.Namespace) -> Server[Any]:
    import mcp_types as types
    from mcp.server import Server

    raw: list[dict[str, Any]] = load_json(args.raw_tools) if args.raw_tools else []
    if args.names:
        names: list[str] = load_json(args.names)
        raw += [{"name": n, "inputSchema": {"type": "object"}} for n in names]
    tools = [raw_tool(d) for d in raw]
    page: int = args.page_size

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if page <= 0:
            return types.ListToolsResult(tools=tools)
        if args.loop_cursor:
            return types.ListToolsResult(tools=tools[:page], next_cursor="loop")
        start = int(params.cursor) if params and params.cursor else 0
        end = start + page
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text = f"{params.name} {json.dumps(params.arguments or {}, sort_keys=True)}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        args.name,
        version="0.1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        cache_hints=cache_hints(args.cache_hint),
    )


# --- faults that happen before serving -----------------------------------------------------


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def spawn_helper(args: argparse.Namespace) -> int:
    stdio = subprocess.DEVNULL if args.helper_close_fds else None
    helper = subprocess.Popen(
        ["sleep", "300"],
        stdin=stdio,
        stdout=stdio,
        stderr=stdio,
        start_new_session=args.helper_setsid,
    )
    return helper.pid


def pre_serve(args: argparse.Namespace) -> None:
    if args.echo_env:
        value = os.environ.get(args.echo_env, "")
        sys.stderr.write(f"fixture: {args.echo_env}={value}\n")
        sys.stderr.flush()
        write_all(1, f"fixture: using token {value}\n".encode())
    if args.crash_on_start:
        sys.stderr.write("fixture: fatal: bad config\n")
        sys.stderr.flush()
        sys.exit(1)
    for i in range(args.garbage):
        write_all(1, f"fixture banner line {i}: not json\n".encode())
    if args.bad_utf8:
        write_all(1, b"\xff\xfe bad utf-8 \xc3\x28\n")
    if args.huge_line:
        write_all(1, b"y" * int(args.huge_line * 2**20) + b"\n")
    if args.stderr_flood:
        total, chunk = int(args.stderr_flood * 2**20), b"e" * 1023 + b"\n"
        if args.flood_no_newlines:
            chunk = b"e" * 1024
        for _ in range(total // len(chunk)):
            write_all(2, chunk)
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    roles = [("server", os.getpid())]
    if args.spawn_helper:
        roles.append(("helper", spawn_helper(args)))
    if args.pidfile:
        write_atomically(args.pidfile, "".join(f"{r} {p}\n" for r, p in roles))
    if args.startup_delay:
        time.sleep(args.startup_delay)


def sleep_forever() -> NoReturn:
    while True:
        time.sleep(3600)


def read_stdin_forever(args: argparse.Namespace) -> None:
    while os.read(0, 65536):
        pass
    if args.ignore_eof:
        sleep_forever()


# --- transports ----------------------------------------------------------------------------


async def serve_stdio(server: MCPServer | Server[Any]) -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.stdio import stdio_server

    if isinstance(server, MCPServer):
        await server.run_stdio_async()
        return
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(app: Starlette, args: argparse.Namespace) -> None:
    import uvicorn

    # Bind and listen before announcing the port: early connects queue in the backlog.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stalls
    sock.bind((args.host, args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    if args.portfile:
        write_atomically(args.portfile, f"{port}\n")
    print(f"fixture: serving http://{args.host}:{port}/mcp", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])


# --- raw JSON-RPC (no SDK) ------------------------------------------------------------------


def serve_raw(args: argparse.Namespace) -> None:
    """Answer initialize, tools/list and tools/call by hand, one JSON line each."""
    listing = b'{"tools": []}'
    if args.list_json:
        text: str = args.list_json
        listing = text.encode() if text.lstrip()[:1] in "[{" else Path(text).read_bytes()
    secret = os.environ.get(args.echo_env, "") if args.echo_env else ""

    def answer(request_id: object, body: bytes) -> None:
        write_all(
            1,
            b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() + b", " + body + b"}\n",
        )

    def error(request_id: object, code: int, message: str) -> None:
        answer(request_id, b'"error": ' + json.dumps({"code": code, "message": message}).encode())

    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "server/discover":
            if not args.no_discover:
                error(request_id, -32601, "Method not found")
        elif method == "initialize":
            if args.init_error:
                error(request_id, -32603, f"cannot start: token {secret} was rejected")
                continue
            result: dict[str, object] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": args.name, "version": "0.1.0"},
            }
            answer(request_id, b'"result": ' + json.dumps(result).encode())
        elif method == "tools/list":
            answer(request_id, b'"result": ' + listing)
        elif method == "tools/call" and message["params"].get("name") == "freeze":
            time.sleep(float(message["params"]["arguments"]["seconds"]))  # reads nothing
            answer(request_id, b'"result": {"content": []}')
        elif method == "tools/call" and secret:
            error(request_id, -32602, f"bad arguments for token {secret}")
        elif method == "tools/call":
            text = json.dumps(message["params"].get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}]}
            answer(request_id, b'"result": ' + json.dumps(result).encode())
        elif method == "ping":
            answer(request_id, b'"result": {}')
        else:
            error(request_id, -32601, "Method not found")
    if args.ignore_eof:
        sleep_forever()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    warnings.simplefilter("ignore")  # hostile tools make pydantic warn on every list
    pre_serve(args)
    if args.no_init:
        read_stdin_forever(args)
        return
    if args.raw:
        serve_raw(args)
        return
    import anyio

    if args.lowlevel:
        server = build_lowlevel(args)
    else:
        server = build_mcpserver(args.name, args.tools, args.cache_hint)
    if args.http:
        serve_http(server.streamable_http_app(host=args.host), args)
    else:
        anyio.run(serve_stdio, server)
    if args.ignore_eof:
        sleep_forever()


if __name__ == "__main__":
    main()
