"""A stdio server's pipes: its stdout read into messages, its stdin written, stderr drained.

What `StdioTransport` promises of its reads and writes is kept here: bounded reads, a
parse that leaves no request hanging, and watchers that tell at once of the leader's
death or a stalled stdin.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import Callable

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp.shared.message import SessionMessage

from mcpmount.errors import describe_invalid
from mcpmount.processes import ProcessGroup
from mcpmount.transports._base import Diagnostics
from mcpmount.transports._limits import MessageLimits

__all__ = ["FLUSH_TIMEOUT", "StdioPipes"]

logger = logging.getLogger(__name__)

FLUSH_TIMEOUT = 0.5
"""Seconds a close waits for the last write to flush, and for stderr's end."""
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
_CHUNK = 65536
_PIPE_CLOSED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


class StdioPipes:
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
        with anyio.move_on_after(FLUSH_TIMEOUT):
            await self._writer_done.wait()
        # The last words of a server are in its stderr tail: read without pauses from now
        # on, and close the pipe only after its end (or a bounded wait for it).
        self._draining.set()
        await self._group.stop()
        self._read_send.close()
        with anyio.move_on_after(FLUSH_TIMEOUT):
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
