"""The stdio transport: one MCP server as a subprocess that speaks MCP on stdin and stdout.

This replaces the SDK's ``stdio_client`` (same stream contract) because a registry needs
what it does not give:

- the server's pid, for status and for sweeping its process group (``ProcessGroup``);
- a sweep of the group after *every* close, also when the leader exited by itself, so a
  helper it forked does not outlive it;
- notice of the leader's death at once, even when a helper still holds the stdout pipe,
  so pending calls fail fast instead of hanging;
- bounded reads: a cap on one message's size (read in linear time), and stderr drained
  into a small tail instead of a pipe that can fill up and stall the server;
- no request left hanging on an answer it cannot parse: invalid UTF-8 is replaced (like
  the SDK's ``encoding_error_handler="replace"``), and an answer pydantic cannot parse
  (a lone surrogate, nesting past its recursion limit) fails its request at once.

A helper that calls ``setsid()`` (a daemon) leaves the group. On Linux an unsandboxed
server runs under the subreaper launcher of ``processes``, which ends such daemons too;
a sandboxed one needs no launcher (bwrap's PID namespace ends everything in it).
Elsewhere, or for a process we may not signal, closing warns, naming it: never silent.

Shutdown follows the MCP spec (close stdin, wait, SIGTERM, SIGKILL) inside a shield with
every wait bounded, so a cancelled caller can neither leak a process nor hang on one.
The pipes' side of it (reads, writes, the watchers) is `StdioPipes` (``_stdio_pipes``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence

import anyio
from mcp.client import Transport
from mcp.client._transport import TransportStreams  # the (read, write) pair; no public alias
from mcp.client.stdio import get_default_environment

from mcpmount.hosts import serving_environment
from mcpmount.processes import STOP_BOUND, ProcessGroup, Reaper
from mcpmount.sandbox import SandboxPolicy, SandboxUnavailableError, sandboxed
from mcpmount.transports._base import ServerTransport
from mcpmount.transports._limits import MessageLimits
from mcpmount.transports._stdio_pipes import FLUSH_TIMEOUT, StdioPipes

__all__ = ["StdioTransport"]

_EXIT_NOTICE_WAIT = 0.5
"""How long a failed call waits to learn that (and how) the server process exited."""

_DEFAULT_LIMITS = MessageLimits(max_bytes=16 * 1024 * 1024, max_tools=1000)

_CLOSE_BOUND = FLUSH_TIMEOUT + STOP_BOUND + 1.0
"""Worst case of a close (the last write's flush, the process group's stop) plus slack."""


class StdioTransport(ServerTransport):
    """A server run as a child process in a new process group, reaped as a whole."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        limits: MessageLimits = _DEFAULT_LIMITS,
        reaper: Reaper | None = None,
        sandbox: SandboxPolicy | None = None,
        server: str = "",
    ) -> None:
        """Describe the server to spawn.

        Args:
            command: The program; looked up on PATH.
            args: Its arguments.
            env: Added to the SDK's minimal environment, which is all the child inherits.
            cwd: Its working directory, as given (a missing one is named as given).
            limits: The longest stdout line accepted, and the most tools one line may
                define; a line that breaks either loses the server.
            reaper: Told of the process group while it lives, to end it if the host
                dies without closing it.
            sandbox: The sandbox to run it in; None runs it as the user.
            server: Its namespace, which sandbox warnings name.
        """
        super().__init__()
        self._command = command
        self._args = list(args)
        self._env = dict(env or {})
        self._cwd = cwd
        self._limits = limits
        self._reaper = reaper
        self._sandbox = sandbox
        self._server = server
        self._group: ProcessGroup | None = None

    @property
    def close_bound(self) -> float:
        return _CLOSE_BOUND

    @property
    def silence_hint(self) -> str:
        return "check that it is an MCP server speaking on stdout"

    @property
    def writes_at_once(self) -> bool:
        return True  # its write stream is unbounded (`StdioPipes`)

    def open(self, on_lost: Callable[[str], None]) -> Transport:
        """Spawn the server when entered; see `ServerTransport.open`.

        ``on_lost`` fires when the leader exited, stdout closed, stdin stalled, or a
        message broke ``max_message_bytes``.

        Raises:
            OSError: On entering, if the process cannot be spawned (``FileNotFoundError``).
        """
        return self._run(on_lost)

    async def wait_failure(self) -> str | None:
        # A call fails when stdout reaches EOF, which may come just before the exit notice.
        if self._group is not None:
            with anyio.move_on_after(_EXIT_NOTICE_WAIT):
                await self._group.exited.wait()
        return self.diagnostics.failure

    def _describe_leaf(self, leaf: BaseException) -> str | None:
        match leaf:
            case FileNotFoundError():
                if self._cwd is not None and leaf.filename == self._cwd:
                    return f"its cwd {self._cwd!r} does not exist"
                return f"command {self._command!r} was not found; check `command` and PATH"
            case PermissionError():
                return f"command {self._command!r} is not executable ({leaf.strerror})"
            case SandboxUnavailableError():
                return str(leaf)
            case _:
                return None

    @contextlib.asynccontextmanager
    async def _run(self, on_lost: Callable[[str], None]) -> AsyncGenerator[TransportStreams]:
        # The files the mcpmounts above mount: an mcpmount this server starts refuses them.
        env = get_default_environment() | serving_environment() | self._env
        # The sandbox (and its proxy) outlives the process: left only after the reaping.
        async with sandboxed(
            self._sandbox, self._server, self._command, self._args, env, self._cwd
        ) as launch:
            group = await ProcessGroup.spawn(
                launch.argv,
                env=launch.env,
                cwd=self._cwd,
                on_reaped=self._note_exit,
                label=f"server {self._server!r}" if self._server else "server",
                # bwrap's PID namespace already ends every process in the sandbox.
                launcher=launch.summary == "none",
            )
            # No await until the task group is entered: a cancellation in the gap would
            # leak the process.
            if self._reaper is not None:
                self._reaper.watch(group.pid, group.term_grace)
            pipes = StdioPipes(group, self.diagnostics, self._limits, on_lost)
            async with anyio.create_task_group() as tg:
                pipes.start(tg)
                self._group = group
                self.diagnostics.pid = group.pid
                try:
                    yield pipes.read_stream, pipes.write_stream
                finally:
                    try:
                        # Shutdown must finish even when the caller is cancelled, or the
                        # server would leak; every wait inside is bounded.
                        with anyio.CancelScope(shield=True):
                            await pipes.shut_down()
                        if self._reaper is not None:
                            self._reaper.unwatch(group.pid)
                    finally:
                        # A helper holding the pipes must not keep the pipe readers waiting.
                        tg.cancel_scope.cancel()

    def _note_exit(self, code: int) -> None:
        if self.diagnostics.failure is None:  # the exit watcher may be gone; keep the code
            self.diagnostics.failure = f"the process exited with code {code}"
