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
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp.client import Transport
from mcp.client._transport import TransportStreams  # the (read, write) pair; no public alias
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from mcpmount.errors import describe_invalid
from mcpmount.hosts import serving_environment
from mcpmount.processes import STOP_BOUND, ProcessGroup, Reaper
from mcpmount.sandbox import SandboxPolicy, SandboxUnavailableError, sandboxed
from mcpmount.transports._base import Diagnostics, ServerTransport
from mcpmount.transports._limits import MessageLimits

__all__ = ["StdioTransport"]

logger = logging.getLogger(__name__)

_FLUSH_TIMEOUT = 0.5
_STDIN_STALL = 30.0
"""Seconds one write to a server's stdin may block before the server counts as lost."""
_STDERR_COALESCE = 0.05
"""Seconds stderr may collect in its pipe between two reads when it trickles."""
_FLOOD_READ = 16384
"""Bytes of one stderr read that say the server floods rather than trickles."""
_FLOOD_HOLD = 1.0
"""Seconds stderr is read without pauses after a read that said so."""
_PARSE_WARNINGS = 3
_EOF_EXIT_WAIT = 1.0
"""Seconds stdout EOF waits for the exit notice before the server counts as lost by EOF."""
_EXIT_NOTICE_WAIT = 0.5
"""How long a failed call waits to learn that (and how) the server process exited."""
_CHUNK = 65536
_PIPE_CLOSED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)

_DEFAULT_LIMITS = MessageLimits(max_bytes=16 * 1024 * 1024, max_tools=1000)

_CLOSE_BOUND = _FLUSH_TIMEOUT + STOP_BOUND + 1.0
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
        return True  # its write stream is unbounded (`_Pipes`)

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
            pipes = _Pipes(group, self.diagnostics, self._limits, on_lost)
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


class _Pipes:
    """The tasks between one spawned server's pipes and the session's memory streams."""

    def __init__(
        self,
        group: ProcessGroup,
        diagnostics: Diagnostics,
        limits: MessageLimits,
        on_lost: Callable[[str], None],
    ) -> None:
        self._group = group
        self._diagnostics = diagnostics
        self._limits = limits
        self._on_lost = on_lost
        self._read_send, self.read_stream = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)
        # Unbounded: a request is written at once, so the SDK's request clock starts at once,
        # even when the server stops reading its stdin (each waiting request holds one message).
        self.write_stream, self._write_receive = anyio.create_memory_object_stream[SessionMessage](
            math.inf
        )
        self._writer_done = anyio.Event()
        self._writes = 0  # writes begun; `watch_stdin` sees one that does not end
        self._writing = False
        self._draining = anyio.Event()  # shutdown: read stderr to the end, without pauses
        self._stderr_done = anyio.Event()

    def start(self, tg: TaskGroup) -> None:
        """Start the pumps and the watchers in ``tg``."""
        tg.start_soon(self.read_stdout)
        tg.start_soon(self.read_stderr)
        tg.start_soon(self.write_stdin)
        tg.start_soon(self.watch_exit)
        tg.start_soon(self.watch_stdin)

    def give_up(self, reason: str) -> None:
        """Stop delivering messages; the first reason is kept and reported to ``on_lost``."""
        first = self._diagnostics.failure is None
        if first:
            self._diagnostics.failure = reason
        # The session sees the connection end: pending requests fail with "Connection closed".
        self._read_send.close()
        if first:
            self._on_lost(reason)

    async def read_stdout(self) -> None:
        stdout = self._group.process.stdout
        assert stdout is not None
        buffer = bytearray()
        scanned = 0  # bytes of buffer known to hold no newline: each byte is scanned once
        parse_errors = 0
        with contextlib.suppress(*_PIPE_CLOSED):
            while True:
                buffer += await stdout.receive(_CHUNK)
                if self._diagnostics.failure is not None:
                    buffer.clear()  # given up: drain, so the server never blocks on its pipe
                    continue
                while (end := buffer.find(b"\n", scanned)) >= 0:
                    line = buffer[:end]
                    del buffer[: end + 1]
                    scanned = 0
                    if not line or line.isspace():
                        continue
                    if (refused := self._limits.refuse(line)) is not None:
                        self._diagnostics.note_refusal(refused)
                        self.give_up(refused.reason)  # before parsing: nothing huge is built
                        break
                    try:
                        message = _parse(line)
                    except ValueError as exc:
                        message = _unparseable_answer(line, exc)
                        if message is None:
                            parse_errors += 1
                            log = (
                                logger.warning if parse_errors <= _PARSE_WARNINGS else logger.debug
                            )
                            log(
                                "server pid %d wrote a non-MCP line to stdout (%d bytes): %s",
                                self._group.pid,
                                len(line),
                                describe_invalid(exc),
                            )
                            continue
                        logger.warning(
                            "server pid %d sent an answer that cannot be parsed: %s",
                            self._group.pid,
                            describe_invalid(exc),
                        )
                    # Once the session is gone, keep draining so the server never blocks. (A
                    # try, not `suppress`: no context manager object for every message.)
                    try:  # noqa: SIM105
                        await self._read_send.send(SessionMessage(message))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        pass
                if self._diagnostics.failure is not None:
                    buffer.clear()
                scanned = len(buffer)
                if scanned > self._limits.max_bytes:
                    self.give_up(self._limits.too_large().reason)
                    buffer.clear()
                    scanned = 0
        self._read_send.close()  # EOF: usually the process is exiting, and the watcher says how
        with anyio.move_on_after(_EOF_EXIT_WAIT):
            await self._group.exited.wait()
        if not self._group.exited.is_set():
            self.give_up("it closed its stdout but kept running")

    async def read_stderr(self) -> None:
        stderr = self._group.process.stderr
        assert stderr is not None
        flooding_until = 0.0
        with contextlib.suppress(*_PIPE_CLOSED):
            while True:
                chunk = await stderr.receive(_CHUNK)
                self._diagnostics.note_stderr(chunk)
                now = anyio.current_time()
                if len(chunk) >= _FLOOD_READ:
                    flooding_until = now + _FLOOD_HOLD
                if len(chunk) < _CHUNK and now >= flooding_until and not self._draining.is_set():
                    # A server that logs a line per request would wake us once per call;
                    # let the pipe collect for a moment instead. A flood is read without
                    # pauses for as long as it lasts: read right after a full pipe was
                    # emptied, it comes in short reads, and pausing on each would hold
                    # the server to one pipe (64 KiB) per pause (50 MiB took 20 s).
                    with anyio.move_on_after(_STDERR_COALESCE):
                        await self._draining.wait()
        self._stderr_done.set()

    async def write_stdin(self) -> None:
        stdin = self._group.process.stdin
        assert stdin is not None
        try:
            async with self._write_receive:
                async for message in self._write_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    self._writes += 1
                    self._writing = True
                    await stdin.send(data.encode() + b"\n")
                    self._writing = False
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self._writer_done.set()
            # A closed stdin usually means the process is exiting: give the exit notice
            # the chance to say how (the first reason given up with is the one kept).
            with anyio.move_on_after(_EOF_EXIT_WAIT):
                await self._group.exited.wait()
            self.give_up("its stdin closed")
        finally:
            self._writer_done.set()

    async def watch_stdin(self) -> None:
        # A server that stops reading its stdin blocks every request behind the write in
        # progress. Each call ends at its own deadline anyway; this declares the server
        # lost, so that later calls fail at once instead of each waiting out its deadline.
        # A write seen in progress at five looks a quarter of the stall apart has waited
        # the whole stall (writes are counted, not timed: no clock read per message).
        seen, looks = -1, 0
        while True:
            await anyio.sleep(_STDIN_STALL / 4)
            if not self._writing:
                seen, looks = -1, 0
            elif self._writes != seen:
                seen, looks = self._writes, 1
            else:
                looks += 1
                if looks > 4:
                    self.give_up(
                        f"it stopped reading its stdin (a write waited {_STDIN_STALL:g} s)"
                    )
                    return

    async def watch_exit(self) -> None:
        await self._group.wait_exit()
        self.give_up(f"the process exited with code {self._group.returncode}")

    async def shut_down(self) -> None:
        """Close the streams, let the last write flush, stop the group, drain stderr."""
        self.read_stream.close()
        self.write_stream.close()
        with anyio.move_on_after(_FLUSH_TIMEOUT):
            await self._writer_done.wait()
        # The last words of a server are in its stderr tail: read without pauses from now
        # on, and close the pipe only after its end (or a bounded wait for it).
        self._draining.set()
        await self._group.stop()
        self._read_send.close()
        with anyio.move_on_after(_FLUSH_TIMEOUT):
            await self._stderr_done.wait()
        await self._group.close_pipes()


def _parse(line: bytes | bytearray) -> mcp_types.JSONRPCMessage:
    """Parse one stdout line; invalid UTF-8 becomes U+FFFD, invalid JSON raises ``ValueError``."""
    adapter = mcp_types.jsonrpc_message_adapter
    try:
        return adapter.validate_json(line, by_name=False)
    except ValueError:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return adapter.validate_json(line.decode("utf-8", "replace"), by_name=False)
        raise


def _unparseable_answer(line: bytes | bytearray, exc: ValueError) -> mcp_types.JSONRPCError | None:
    """Return an error answer for a line that answers a request but cannot be parsed.

    pydantic drops such a line whole (a lone surrogate, nesting past its recursion limit),
    and the request would wait for its timeout; the standard library can still read the
    ``id``, so the request fails at once, saying why.
    """
    try:
        data = json.loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "method" in data:
        return None
    request_id = data.get("id")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    error = mcp_types.ErrorData(
        code=mcp_types.PARSE_ERROR,
        message=f"mcpmount could not parse the server's answer: {describe_invalid(exc)}",
    )
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
