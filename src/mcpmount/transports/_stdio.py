"""The stdio transport: one MCP server as a subprocess, reaped as a whole process group.

This replaces the SDK's ``stdio_client`` (same stream contract) because a registry needs
what it does not give (SDK_NOTES.md §4, FAILURE_MODES.md §3):

- the server's pid, for status and for sweeping its process group;
- a sweep of the group after *every* close, also when the leader exited by itself, so a
  helper it forked does not outlive it;
- notice of the leader's death at once, even when a helper still holds the stdout pipe,
  so pending calls fail fast instead of hanging;
- bounded reads: a cap on one message's size (read in linear time), and stderr drained
  into a small tail instead of a pipe that can fill up and stall the server;
- no request left hanging on an answer it cannot parse: invalid UTF-8 is replaced (like
  the SDK's ``encoding_error_handler="replace"``), and an answer pydantic cannot parse
  (a lone surrogate, nesting past its recursion limit) fails its request at once.

Out of reach, by design of process groups: a helper that calls ``setsid()`` (a daemon)
leaves the group and survives the sweep. Closing logs a warning naming it, so it is never
silent; only a cgroup or a container would catch it.

Shutdown follows the MCP spec (close stdin, wait, SIGTERM, SIGKILL) inside a shield with
every wait bounded, so a cancelled caller can neither leak a process nor hang on one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from collections import deque
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE

import anyio
import anyio.to_thread
import mcp_types
from anyio.abc import Process
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from mcpmount.errors import describe_invalid

__all__ = ["ProcessHandle", "stdio_transport"]

logger = logging.getLogger(__name__)

STDIN_GRACE = 2.0
"""Seconds a server gets to exit by itself after its stdin closes (the SDK's figure)."""

TERM_GRACE = 2.0
"""Seconds the process group gets after SIGTERM before SIGKILL."""

SWEEP_GRACE = 0.5
"""Seconds leftover group members get after SIGTERM once the leader is gone."""

_FLUSH_TIMEOUT = 0.5
_STDIN_STALL = 30.0
"""Seconds one write to a server's stdin may block before the server counts as lost."""
_STDERR_COALESCE = 0.05
"""Seconds stderr may collect in its pipe between two reads when it trickles."""
_POLL_INTERVAL = 0.01
_GROUP_POLL_INTERVAL = 0.02
_STDERR_TAIL_BYTES = 4096
_PARSE_WARNINGS = 3
_EOF_EXIT_WAIT = 1.0
"""Seconds stdout EOF waits for the exit notice before the server counts as lost by EOF."""
_CHUNK = 65536
_PIPE_CLOSED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


@dataclass(eq=False)
class ProcessHandle:
    """What the registry may know about a running stdio server."""

    pid: int
    """The leader's pid; also its process group id (it starts a new session)."""

    exited: anyio.Event = field(default_factory=anyio.Event)
    """Set as soon as the leader process has exited."""

    failure: str | None = None
    """Why the transport gave up on the server (e.g. an oversized message), if it did."""

    # Never in a repr: the server may have written a secret to stderr.
    _stderr: deque[bytes] = field(default_factory=lambda: deque[bytes](), repr=False)
    _stderr_size: int = field(default=0, repr=False)

    @property
    def pgid(self) -> int:
        """The server's process group id."""
        return self.pid

    def stderr_tail(self, limit: int = 2000) -> str:
        """Return the last ``limit`` characters the server wrote to stderr."""
        text = b"".join(self._stderr).decode("utf-8", "replace")
        return text[-limit:]

    def _keep_stderr(self, chunk: bytes) -> None:
        self._stderr.append(chunk)
        self._stderr_size += len(chunk)
        while self._stderr_size - len(self._stderr[0]) >= _STDERR_TAIL_BYTES:
            self._stderr_size -= len(self._stderr.popleft())


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    max_message_bytes: int = 16 * 1024 * 1024,
    on_spawn: Callable[[ProcessHandle], None] | None = None,
    on_lost: Callable[[ProcessHandle], None] | None = None,
) -> AsyncGenerator[TransportStreams]:
    """Spawn ``command`` in a new process group and speak MCP over its stdin and stdout.

    The child inherits only the SDK's minimal environment plus ``env``. ``on_spawn`` gets
    the process handle as soon as the process exists; ``on_lost`` is called once, from the
    transport's own task, when it stops delivering messages: the leader exited, stdout
    closed, or a message broke ``max_message_bytes`` (``handle.failure`` says which).

    Raises:
        OSError: If the process cannot be spawned (e.g. ``FileNotFoundError``).
    """
    process = await anyio.open_process(
        [command, *args],
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
        env=get_default_environment() | dict(env or {}),
        cwd=cwd,
        start_new_session=True,
    )
    # No await until the task group is entered: a cancellation in the gap would leak the process.
    handle = ProcessHandle(pid=process.pid)
    read_send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    writing: list[float | None] = [None]  # when the write in progress began
    draining = anyio.Event()  # shutdown: read stderr to the end, without pauses
    stderr_done = anyio.Event()

    def give_up(reason: str) -> None:
        first = handle.failure is None
        if first:
            handle.failure = reason
        # The session sees the connection end: pending requests fail with "Connection closed".
        read_send.close()
        if first and on_lost is not None:
            on_lost(handle)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        scanned = 0  # bytes of buffer known to hold no newline: each byte is scanned once
        parse_errors = 0
        with contextlib.suppress(*_PIPE_CLOSED):
            while True:
                buffer += await process.stdout.receive(_CHUNK)
                if handle.failure is not None:
                    buffer.clear()  # given up: drain, so the server never blocks on its pipe
                    continue
                while (end := buffer.find(b"\n", scanned)) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    scanned = 0
                    if not line.strip():
                        continue
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
                                handle.pid,
                                len(line),
                                describe_invalid(exc),
                            )
                            continue
                        logger.warning(
                            "server pid %d sent an answer that cannot be parsed: %s",
                            handle.pid,
                            describe_invalid(exc),
                        )
                    # After the session is gone, keep draining so the server never blocks.
                    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                        await read_send.send(SessionMessage(message))
                scanned = len(buffer)
                if scanned > max_message_bytes:
                    give_up(f"it sent a message over max_message_bytes ({max_message_bytes} bytes)")
                    buffer.clear()
                    scanned = 0
        read_send.close()  # EOF: usually the process is exiting, and the watcher says how
        with anyio.move_on_after(_EOF_EXIT_WAIT):
            await handle.exited.wait()
        if not handle.exited.is_set():
            give_up("it closed its stdout but kept running")

    async def read_stderr() -> None:
        assert process.stderr is not None
        with contextlib.suppress(*_PIPE_CLOSED):
            while True:
                chunk = await process.stderr.receive(_CHUNK)
                handle._keep_stderr(chunk)  # pyright: ignore[reportPrivateUsage]
                if len(chunk) < _CHUNK and not draining.is_set():
                    # A server that logs a line per request would wake us once per call;
                    # let the pipe collect for a moment instead. A flood fills whole
                    # chunks and is read without pause, so the server never blocks.
                    with anyio.move_on_after(_STDERR_COALESCE):
                        await draining.wait()
        stderr_done.set()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_receive:
                async for message in write_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writing[0] = anyio.current_time()
                    await process.stdin.send(data.encode() + b"\n")
                    writing[0] = None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            give_up("its stdin closed")
        finally:
            writer_done.set()

    async def watch_stdin() -> None:
        # A server that stops reading its stdin blocks every request behind the write in
        # progress, before any request's timeout clock has started. A watchdog, not a cancel
        # scope per write: the write path is the hot path.
        while True:
            await anyio.sleep(_STDIN_STALL / 4)
            started = writing[0]
            if started is not None and anyio.current_time() - started > _STDIN_STALL:
                give_up(f"it stopped reading its stdin (a write waited {_STDIN_STALL:g} s)")
                return

    async def watch_exit() -> None:
        await _wait_exit(process)
        handle.exited.set()
        give_up(f"the process exited with code {process.returncode}")

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        tg.start_soon(write_stdin)
        tg.start_soon(watch_exit)
        tg.start_soon(watch_stdin)
        if on_spawn is not None:
            on_spawn(handle)
        try:
            yield read_stream, write_stream
        finally:
            try:
                # Shutdown must finish even when the caller is cancelled, or the server
                # would leak; every wait inside is bounded.
                with anyio.CancelScope(shield=True):
                    read_stream.close()
                    write_stream.close()
                    with anyio.move_on_after(_FLUSH_TIMEOUT):
                        await writer_done.wait()
                    await _stop(process, handle)
                    read_send.close()
                    draining.set()  # the last words of a server are in its stderr tail
                    with anyio.move_on_after(_FLUSH_TIMEOUT):
                        await stderr_done.wait()
            finally:
                # A helper holding the pipes must not keep the pipe readers waiting.
                tg.cancel_scope.cancel()


async def _wait_exit(process: Process) -> None:
    """Return when the leader has exited, without waiting for its pipes to close.

    ``Process.wait()`` would also wait for stdout EOF, which never comes while a helper
    holds the pipe. A pidfd wakes us at once; polling ``returncode`` is the fallback.
    """
    try:
        pidfd = os.pidfd_open(process.pid)
    except OSError:
        pidfd = None
    if pidfd is not None:
        try:
            await anyio.wait_readable(pidfd)
        finally:
            anyio.notify_closing(pidfd)
            os.close(pidfd)
    while process.returncode is None:
        await anyio.sleep(_POLL_INTERVAL)


async def _exit_of(process: Process, handle: ProcessHandle) -> None:
    """Wait until the leader has exited and been reaped, and set ``handle.exited``.

    The transport's own watcher may be gone: a caller's cancellation (a startup deadline)
    cancels it along with the other transport tasks, so this waits by itself.
    """
    if not handle.exited.is_set():
        await _wait_exit(process)
        handle.exited.set()
    while process.returncode is None:
        await anyio.sleep(_POLL_INTERVAL)
    if handle.failure is None:  # the watcher may be gone; keep the exit code for errors
        handle.failure = f"the process exited with code {process.returncode}"


async def _stop(process: Process, handle: ProcessHandle) -> None:
    """Close stdin, wait, SIGTERM the group, wait, SIGKILL it; then sweep the group."""
    assert process.stdin is not None
    escaped = await _escaped_descendants(handle.pid)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    pgid = handle.pgid
    with anyio.move_on_after(STDIN_GRACE):
        await _exit_of(process, handle)
    if not handle.exited.is_set():
        logger.info("server pid %d ignored stdin EOF for %gs; sending SIGTERM", pgid, STDIN_GRACE)
        await _terminate_group(pgid, TERM_GRACE, process, handle)
    # The leader is gone (or was killed); helpers it forked into its group must not outlive
    # it. The SDK skips this when the leader exits in time, and leaks them (SDK_NOTES §4).
    if await _group_members(pgid):
        await _terminate_group(pgid, SWEEP_GRACE, process, handle)
    with anyio.move_on_after(TERM_GRACE):
        await _exit_of(process, handle)
    if process.returncode is None:
        logger.warning("server pid %d survived SIGKILL; abandoning it", pgid)
    for pid, start in escaped:
        if _started_at(pid) == start:
            logger.warning(
                "server pid %d: its descendant pid %d left the process group (setsid or "
                "setpgid), so closing the server cannot reap it; it is still running",
                pgid,
                pid,
            )
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
    _close_subprocess_transport(process)


async def _terminate_group(
    pgid: int, grace: float, process: Process, handle: ProcessHandle
) -> None:
    """SIGTERM the group, wait up to ``grace`` for it to empty, then SIGKILL what is left."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    if await _wait_group_empty(pgid, grace, process, handle):
        return
    logger.info("process group %d outlived SIGTERM by %gs; sending SIGKILL", pgid, grace)
    _signal_group(pgid, signal.SIGKILL)
    if not await _wait_group_empty(pgid, grace, process, handle):
        logger.warning("process group %d survived SIGKILL: %s", pgid, await _group_members(pgid))


async def _wait_group_empty(
    pgid: int, timeout: float, process: Process, handle: ProcessHandle
) -> bool:
    """Return whether every live member of the group is gone within ``timeout``.

    The leader's exit is awaited first (a pidfd, no polling): while it lives the group is
    certainly not empty, and scanning /proc for 30 servers at once would stall the loop.
    """
    with anyio.move_on_after(timeout):
        await _exit_of(process, handle)
        while await _group_members(pgid):
            await anyio.sleep(_GROUP_POLL_INTERVAL)
        return True
    return False


async def _group_members(pgid: int) -> list[int]:
    """`group_members`, with the /proc scan (if one is needed) off the event loop."""
    if not _group_exists(pgid):
        return []
    return await anyio.to_thread.run_sync(_scan_group, pgid)


def _group_exists(pgid: int) -> bool:
    """Probe the group with signal 0: cheap, and most groups are simply gone."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # members we may not signal (or zombies): it exists
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the group; return False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        logger.warning("no permission to signal some of process group %d", pgid)
    return True


def group_members(pgid: int) -> list[int]:
    """Return the pids of live (non-zombie) processes in process group ``pgid``.

    Zombies count as dead: an orphaned helper stays a zombie until PID 1 reaps it, and
    some container inits never do, so ``killpg(pgid, 0)`` would report it alive forever.
    """
    return _scan_group(pgid) if _group_exists(pgid) else []


def _scan_group(pgid: int) -> list[int]:
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: the signal probe is all we have
        return [pgid]
    members: list[int] = []
    for entry in entries:
        fields = _proc_stat(entry) if entry.isdigit() else None
        if fields is not None and len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def _proc_stat(pid: int | str) -> list[bytes] | None:
    """Return the fields of ``/proc/<pid>/stat`` after the command: state ppid pgrp ...

    The command is in parentheses and may hold spaces or parentheses, so the fields start
    after the last ``)``.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _started_at(pid: int) -> int | None:
    """Return the start time of live process ``pid`` (clock ticks), or None if it is gone."""
    fields = _proc_stat(pid)
    if fields is None or len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[19])


async def _escaped_descendants(leader: int) -> list[tuple[int, int]]:
    """Return (pid, start time) of the leader's live descendants outside its process group."""
    if not _has_children(leader):
        return []  # the common case: no /proc scan at all
    return await anyio.to_thread.run_sync(_scan_escaped_descendants, leader)


def _has_children(pid: int) -> bool:
    """Whether ``pid`` has child processes (True when the kernel cannot tell us)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False  # the leader is gone: its orphans were reparented, out of our view
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                if f.read().strip():
                    return True
        except FileNotFoundError:
            continue  # the thread ended
        except OSError:
            return True  # no CONFIG_PROC_CHILDREN: scan to be sure
    return False


def _scan_escaped_descendants(leader: int) -> list[tuple[int, int]]:
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    children: dict[int, list[tuple[int, list[bytes]]]] = {}
    for pid in entries:
        fields = _proc_stat(pid)
        if fields is not None and len(fields) >= 20:
            children.setdefault(int(fields[1]), []).append((pid, fields))
    escaped: list[tuple[int, int]] = []
    stack = [leader]
    while stack:
        for pid, fields in children.get(stack.pop(), []):
            stack.append(pid)
            if int(fields[2]) != leader and fields[0] != b"Z":
                escaped.append((pid, int(fields[19])))
    return escaped


def _close_subprocess_transport(process: Process) -> None:
    """Close asyncio's subprocess transport, which stays open while a pipe end survives.

    Nothing public exposes it (the SDK does the same walk); without it the transport warns
    at garbage collection.
    """
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()


def _parse(line: bytes) -> mcp_types.JSONRPCMessage:
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


def _unparseable_answer(line: bytes, exc: ValueError) -> mcp_types.JSONRPCError | None:
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
