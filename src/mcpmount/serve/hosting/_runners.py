"""Hosting an MCP server in this process: stdio (its wire: ``_stdio``), or uvicorn on our socket.

Nothing here knows the registry: `run_stdio` takes the SDK's low-level ``Server`` and
`run_http` an ASGI app (and apps to serve beside it on other ports, each an `Endpoint`).
While serving stdio, fd 1 points at stderr (`stdio_wire` or the SDK's ``stdio_server``
diverts it), so nothing but protocol messages can reach stdout. The process's signals are not
handled here: uvicorn runs without its own handlers, and the caller decides when to stop.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
from collections.abc import Callable, Generator, Sequence
from typing import Any, Final

import anyio
import uvicorn
from mcp.server import InitializationOptions, Server
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette

from mcpmount.serve.hosting._stdio import stdio_wire
from mcpmount.serve.hosting._stopping import Stopping
from mcpmount.serve.ops import Endpoint

__all__ = ["run_http", "run_stdio", "write_portfile", "written"]

_BACKSTOP: Final = 2
"""Seconds uvicorn waits, after the stop's own bound, before cancelling what is left
(`Stopping` has answered every request it cut by then; this only bounds a stuck one)."""


async def run_stdio(server: Server[Any], options: InitializationOptions) -> None:
    """Serve one client over this process's stdin and stdout until stdin ends."""
    async with (
        stdio_wire() as (stdin, stdout),
        stdio_server(stdin=stdin, stdout=stdout) as (read, write),
    ):
        await server.run(read, write, options)


async def run_http(
    app: Starlette,
    stop: anyio.Event,
    *,
    host: str,
    port: int,
    on_ready: Callable[[str], None] | None,
    before_shutdown: Callable[[], None],
    stopping: Stopping,
    beside: Sequence[Endpoint] = (),
) -> None:
    """Serve ``app`` at ``http://HOST:PORT/mcp``, and each of ``beside``, until ``stop`` is set.

    Every address is bound before anything is served; the endpoints stop together (when one
    ends, the others do). Once ``stop`` is set, the stop goes as `Stopping` says: drain,
    close, finish the calls in flight, cut the rest with an answer.

    Args:
        app: The streamable HTTP app.
        stop: Set it to shut down gracefully (bounded by ``stopping``'s drain and timeout).
        host: The address to bind.
        port: The port to bind; 0 lets the OS choose.
        on_ready: Called with the URL once every socket is bound and serving, after the
            ``on_ready`` of each of ``beside`` (a script that waits for it finds theirs done).
        before_shutdown: Called once drained, just before the endpoints close.
        stopping: The graceful stop; ``app`` must be behind its middleware.
        beside: More apps to serve on addresses of their own, in this process and loop.

    Raises:
        OSError: An address cannot be bound.
    """
    endpoints = [*beside, Endpoint(app, host, port, "/mcp", on_ready)]
    with contextlib.ExitStack() as sockets:
        bound = [sockets.enter_context(_bind(each.host, each.port)) for each in endpoints]
        grace = stopping.stop_timeout + _BACKSTOP
        servers = [_UvicornServer(_uvicorn_config(each.app, grace)) for each in beside]
        servers.append(_UvicornServer(_uvicorn_config(app, grace), on_close=stopping.close))

        def stop_all() -> None:
            for server in servers:
                server.should_exit = True

        async with anyio.create_task_group() as tg:

            async def announce_then_stop() -> None:
                while not all(server.started for server in servers):
                    await anyio.sleep(0.01)
                for each, sock in zip(endpoints, bound, strict=True):
                    if each.on_ready is not None:
                        each.on_ready(_url(each.host, sock, each.path))
                await stop.wait()
                await stopping.drain()
                before_shutdown()
                stop_all()
                await stopping.finish()

            async def serve(server: _UvicornServer, sock: socket.socket) -> None:
                try:
                    await server.serve(sockets=[sock])
                finally:
                    stop_all()  # one listener ended (stopped, or its startup failed)

            tg.start_soon(announce_then_stop)
            async with anyio.create_task_group() as serving:
                for server, sock in zip(servers, bound, strict=True):
                    serving.start_soon(serve, server, sock)
            tg.cancel_scope.cancel()


def _uvicorn_config(app: Starlette, grace: float) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_config=None,  # the application configures logging
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(grace),
    )


def _url(host: str, sock: socket.socket, path: str) -> str:
    shown_host = f"[{host}]" if ":" in host else host
    return f"http://{shown_host}:{sock.getsockname()[1]}{path}"


def write_portfile(path: str | os.PathLike[str], url: str) -> None:
    """Write the port of ``url`` to ``path`` atomically (for scripts that bind port 0)."""
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w") as f:
        f.write(port + "\n")
    os.replace(tmp, path)


def written(
    on_ready: Callable[[str], None] | None, portfile: str | None
) -> Callable[[str], None] | None:
    """``on_ready``, then the port written to ``portfile`` (``[serve] portfile``); as it is
    without a port file."""
    if portfile is None:
        return on_ready

    def ready(url: str) -> None:
        if on_ready is not None:
            on_ready(url)
        write_portfile(portfile, url)

    return ready


class _UvicornServer(uvicorn.Server):
    """uvicorn, minus its signal handlers: the caller owns the signals, and must close the
    upstream servers before the process exits (uvicorn would re-raise the signal).

    Args:
        config: uvicorn's config.
        on_close: Called as the shutdown begins, just before the listener closes.
    """

    def __init__(self, config: uvicorn.Config, on_close: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self._on_close = on_close

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._on_close is not None:
            self._on_close()  # no await before uvicorn closes the listener: nothing between
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


@contextlib.contextmanager
def _bind(host: str, port: int) -> Generator[socket.socket]:
    """Bind a listening socket ourselves (uvicorn calls sys.exit on a bind failure); closed
    on leaving."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by every accepted connection. Without it a response written in pieces
        # meets the client's delayed ACK: each call took 44 ms instead of under 2 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(128)
        sock.set_inheritable(False)  # upstream servers spawned later must not hold it
        yield sock
