"""From a server's command and its `SandboxPolicy` to the command line that runs it sandboxed.

`sandboxed` is entered around the spawn and left after the server is reaped: it owns what
the sandbox needs beside the process, the host allow-list's proxy and, on macOS, the
private home and ``TMPDIR`` directories.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.to_thread

from mcpmount.sandbox._bwrap import PROXY_PORT, bwrap_argv
from mcpmount.sandbox._macos import sandbox_exec_profile
from mcpmount.sandbox._policy import (
    SandboxPolicy,
    SandboxUnavailableError,
    Tool,
    find_tool,
    resolve,
)
from mcpmount.sandbox._proxy import AllowList, Limits, serve_proxy
from mcpmount.sandbox._runtime import Program

__all__ = ["Launch", "sandboxed"]

logger = logging.getLogger(__name__)

_PRIVATE_HOME = "/home/sandbox"
"""The home of a sandboxed server whose ``$HOME`` is unset, relative or ``/``."""

_warned: set[str] = set()
"""Servers already warned that they run unsandboxed (``prefer``): one warning each."""


@dataclass(frozen=True, slots=True)
class Launch:
    """How to spawn one server."""

    argv: list[str]
    env: dict[str, str]
    summary: str
    """How it is sandboxed: ``bwrap, network off``, or ``none``."""


@contextlib.asynccontextmanager
async def sandboxed(
    policy: SandboxPolicy | None,
    server: str,
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
) -> AsyncGenerator[Launch]:
    """Yield the command line that runs the server under ``policy`` (as is, for None).

    Raises:
        SandboxUnavailableError: If the server must be sandboxed and cannot be: no tool
            (the message says what to install), a ``read`` or ``write`` path is missing,
            or the program needs what a sandbox never shows (the message says what to
            list in ``read``).
        FileNotFoundError: If ``command`` is not found on the child's PATH.
    """
    plain = Launch([command, *args], dict(env), "none")
    if policy is None:
        yield plain
        return
    tool = await anyio.to_thread.run_sync(find_tool)
    if not isinstance(tool, Tool):
        if not policy.prefer:
            raise SandboxUnavailableError(
                f'it must run in a sandbox, but {tool} (or set sandbox = "prefer")'
            )
        if server not in _warned:
            _warned.add(server)
            logger.warning("server %r runs unsandboxed: %s", server, tool)
        yield plain
        return
    program, home, workdir = await anyio.to_thread.run_sync(
        _prepare, policy, command, args, env, cwd
    )
    env = dict(env)
    summary = f"{tool.kind}, {policy.describe_network()}"
    async with contextlib.AsyncExitStack() as stack:
        scratch = tempfile.mkdtemp(prefix="mcpmount-sandbox-")  # 0700: ours alone
        stack.callback(shutil.rmtree, scratch, ignore_errors=True)
        if tool.kind == "bwrap":
            env["HOME"] = home
            socket_path = None
            if isinstance(policy.network, tuple):
                socket_path = os.path.join(scratch, "proxy.sock")
                listener = await anyio.create_unix_listener(socket_path)
                await _serve(stack, listener, policy, server)
                env |= _proxy_env(PROXY_PORT)
            argv = bwrap_argv(
                tool.path,
                policy,
                program,
                args,
                home=home,
                cwd=workdir,
                proxy_socket=socket_path,
            )
        else:
            home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
            os.mkdir(home)
            os.mkdir(tmp)
            env |= {"HOME": home, "TMPDIR": tmp}
            port = None
            if isinstance(policy.network, tuple):
                listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
                port = listener.extra(anyio.abc.SocketAttribute.local_port)
                await _serve(stack, listener, policy, server)
                env |= _proxy_env(port)
            shown = (*program.paths, *(path for path, _ in program.links))
            profile = sandbox_exec_profile(policy, shown, home=home, tmp=tmp, proxy_port=port)
            argv = [tool.path, "-p", profile, program.executable, *args]
        yield Launch(argv, env, summary)


def _prepare(
    policy: SandboxPolicy,
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
) -> tuple[Program, str, str]:
    """Find the program (`resolve`); return it, the home and the start dir."""
    program = resolve(policy, command, args, env, cwd)
    home = os.path.normpath(env.get("HOME", ""))
    if not os.path.isabs(home) or home == "/":
        home = _PRIVATE_HOME
    return program, home, os.path.abspath(cwd or os.getcwd())


async def _serve(
    stack: contextlib.AsyncExitStack,
    listener: anyio.abc.Listener[anyio.abc.ByteStream],
    policy: SandboxPolicy,
    server: str,
) -> None:
    """Run the proxy of ``policy``'s host list on ``listener`` until ``stack`` closes."""
    allow = AllowList(policy.network if isinstance(policy.network, tuple) else ())
    limits = Limits(policy.max_connections, policy.max_buffered_bytes)
    await stack.enter_async_context(listener)
    tg = await stack.enter_async_context(anyio.create_task_group())
    stack.callback(tg.cancel_scope.cancel)
    tg.start_soon(serve_proxy, listener, allow, server, limits)


def _proxy_env(port: int) -> dict[str, str]:
    url = f"http://127.0.0.1:{port}"
    names = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
    return dict.fromkeys(names, url) | {"NO_PROXY": "", "no_proxy": ""}
