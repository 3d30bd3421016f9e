"""One call on its way to a server: its arguments checked, its interceptors passed (the
secret guard and approval among them, see ``_intercept``), and its timeout a deadline.

Arguments: a transport that meets a value it cannot encode fails inside its writer, and
that failure would tear down the whole connection and every call in flight on it. So the
arguments are walked once, before anything is sent, and a value JSON cannot carry is the
caller's error.

Deadline: the timeout bounds the whole call, whatever the transport is doing. Where every
write is taken at once (stdio, whose write queue is unbounded, so even a server that stops
reading its stdin holds no write) and no question's handler runs off the request's
clock (the handshake era, or a server that cannot ask), the SDK's own request clock,
which starts once the request is written, is the deadline: no second timer on every call.
Where a write may wait (HTTP, behind a POST), or a question's handler may run between the
requests of one call (the 2026-07-28 era), or the call is a task (a tool that can only
run as one: created by one request, its result waited for by another), the call runs in
a cancel scope with the deadline. A call that arrives while its server (re)starts waits for it
within the same deadline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, cast

import anyio
import mcp_types
from mcp.shared.dispatcher import ProgressFnT

from mcpmount.catalog import rewrite_call
from mcpmount.errors import (
    ArgumentsError,
    CallTimeoutError,
    ServerNotRunningError,
    ToolRemovedError,
    UpstreamError,
)
from mcpmount.gates import Interception
from mcpmount.observers import Observers
from mcpmount.registry._servers import Servers
from mcpmount.tool import MountedTool
from mcpmount.upstream import Connection, ServerState, Supervisor, needs_task

__all__ = ["call_tool", "call_within", "check_arguments", "redacted_error"]


async def call_tool(
    servers: Servers,
    entry: MountedTool,
    arguments: Mapping[str, Any] | None,
    timeout: float | None,
    progress: ProgressFnT | None,
    context: object | None,
    interception: Interception,
    observers: Observers,
) -> mcp_types.CallToolResult:
    """Call ``entry`` once its arguments are checked and its interceptors (the secret
    guard, its approval gate, ...) let it through, and return its result once they saw
    it; count it in its server's statistics. See `Registry.call`."""
    redact = interception.secrets.redact
    _checked(entry, arguments, redact)
    supervisor = servers.supervisors[entry.server]
    plan = interception.plan(entry, supervisor.spec, servers.settings)
    call = None
    if plan.before or plan.after:
        call = await plan.run_before(arguments, context)
        if call.arguments or arguments is not None:  # a call without arguments stays so
            if call.arguments != arguments:  # a hook rewrote them: check them again
                _checked(entry, call.arguments, redact)
            arguments = call.arguments
    if progress is not None and interception.secrets.index().known is not None:
        progress = _redacted_progress(progress, redact)
    seconds = servers.timeout(supervisor, timeout)  # the same default as prompts and reads
    began = anyio.current_time()
    try:
        result = await call_within(
            supervisor, entry, arguments, began, seconds, progress, context, servers, observers
        )
    except UpstreamError as exc:
        raise redacted_error(exc, redact) from None
    if (stats := servers.stats.get(entry.server)) is not None:
        stats.record(supervisor.last_call - began)  # when this call ended: no await since
    result = rewrite_call(entry.server, result, prefix=supervisor.spec.prefix)
    return result if call is None else await plan.run_after(call, result)


def _checked(
    entry: MountedTool, arguments: Mapping[str, Any] | None, redact: Callable[[str], str]
) -> None:
    """`check_arguments`, naming the place with every known secret redacted: an argument's
    name may be one."""
    try:
        check_arguments(entry.server, entry.name, arguments)
    except ArgumentsError as exc:
        raise ArgumentsError(exc.server, entry.name, redact(exc.where), exc.problem) from None


def redacted_error(exc: UpstreamError, redact: Callable[[str], str]) -> UpstreamError:
    """``exc`` with every known secret redacted from what the server said (itself if it
    said none): the model reads the error."""
    message = redact(exc.upstream_message)
    if message == exc.upstream_message:
        return exc
    return UpstreamError(exc.server, exc.tool, exc.code, message, kind=exc.kind)


def _redacted_progress(report_to: ProgressFnT, redact: Callable[[str], str]) -> ProgressFnT:
    """``report_to`` given each message with every known secret redacted."""

    async def report(progress: float, total: float | None, message: str | None) -> None:
        await report_to(progress, total, None if message is None else redact(message))

    return report


def check_arguments(server: str, tool: str, arguments: Mapping[str, Any] | None) -> None:
    """Raise ``ArgumentsError`` if ``arguments`` hold a value JSON over UTF-8 cannot carry.

    One pass: a scalar is checked where it stands, and only a nested container waits on
    the stack (with its path), so plain arguments allocate nothing. Iterative, so a deeply
    nested argument cannot exhaust the stack, and bounded in depth, so a container that
    holds itself is refused instead of walked forever.
    """
    if arguments is None:
        return
    stack: list[tuple[object, str, int]] = [(arguments, "arguments", 0)]
    while stack:
        container, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            problem = f"nests deeper than {MAX_DEPTH} levels (does it hold itself?)"
            raise ArgumentsError(server, tool, where, problem)
        items: Iterable[tuple[object, object]]
        if isinstance(container, dict | Mapping):
            items = cast(Mapping[object, object], container).items()
            keyed = True
        elif isinstance(container, list | tuple):
            items = enumerate(cast(Sequence[object], container))
            keyed = False
        else:
            continue  # other types: the SDK's serializer decides (and raises a TypeError)
        for key, value in items:
            if keyed:
                if not isinstance(key, str):
                    problem = "has a key that is not a string; JSON keys are strings"
                    raise ArgumentsError(server, tool, where, problem)
                if not key.isascii() and not _encodable(key):
                    raise ArgumentsError(server, tool, f"a key of {where}", _SURROGATE)
            if isinstance(value, str):
                if not value.isascii() and not _encodable(value):
                    raise ArgumentsError(server, tool, _path(where, key, depth), _SURROGATE)
            elif value is None or isinstance(value, int):
                pass
            elif isinstance(value, float):
                if not math.isfinite(value):
                    problem = f"is {value}, {_NOT_FINITE}"
                    raise ArgumentsError(server, tool, _path(where, key, depth), problem)
            elif isinstance(value, dict | list | tuple | Mapping):
                stack.append((cast(object, value), _path(where, key, depth), depth + 1))


def _path(where: str, key: object, depth: int) -> str:
    """Where the item ``key`` of the container at ``where`` (``depth`` deep) stands."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if depth else str(key)


MAX_DEPTH = 256
"""The deepest nesting of containers in a call's arguments."""

_SURROGATE = "holds a lone surrogate (e.g. \\ud800), which UTF-8 cannot encode"
_NOT_FINITE = "which JSON cannot carry (use null or a string)"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def call_within(
    supervisor: Supervisor,
    entry: MountedTool,
    arguments: Mapping[str, Any] | None,
    began: float,
    timeout: float,
    progress: ProgressFnT | None,
    context: object | None,
    starts: Servers,
    observers: Observers,
) -> mcp_types.CallToolResult:
    """Call ``entry`` on ``supervisor``'s server, all of it within ``timeout`` seconds of
    ``began`` (anyio's clock).

    ``context`` is the caller's, for the handlers of what the server asks meanwhile.
    ``observers`` are told how it ended; it is traced (`Observers.calling`).

    ``starts`` is told of a connection found dead whose owner has not yet reported it,
    so that a restart (if the policy wants one) begins now and this call waits for it
    instead of failing at once; and of a server not running (``lazy``, or stopped when
    idle), which it starts while this call waits.

    Raises:
        ServerNotRunningError: The server is restarting (or starting) and was not back in
            time, or it did not start.
        ToolRemovedError: Its server, once started, no longer lists the tool.
        CallTimeoutError: No answer in time; the outcome is unknown.
        CallError: What ``Connection.call`` raises.
    """
    with observers.calling(entry, supervisor.spec.transport) as observed, supervisor.in_use():
        left = timeout
        if not supervisor.serving:  # a restart, a start or a wake to wait for first
            left = await _until_up(supervisor, entry, began + timeout, timeout, starts)
        connection, use = await _connection_of(starts, supervisor, entry, context, began, timeout)
        if connection is not supervisor.connection:
            left = began + timeout - anyio.current_time()
        name, raw_name = entry.name, entry.raw_name
        as_task = needs_task(entry.definition)  # its wait spans requests: the scope's clock
        with use:
            if connection.clocked_by_sdk and not as_task:  # the SDK's request clock bounds it
                try:
                    result = await connection.call(
                        name, raw_name, arguments, progress, context, left
                    )
                except CallTimeoutError:  # named with the whole timeout, not what was left
                    raise CallTimeoutError(entry.server, name, timeout) from None
            else:  # a write may wait (HTTP), or a question: all of it in a scope
                result = None
                with anyio.CancelScope(deadline=began + timeout):
                    result = await connection.call(
                        name, raw_name, arguments, progress, context, as_task=as_task
                    )
                if result is None:
                    raise CallTimeoutError(entry.server, name, timeout)
        observed.result = result
        return result


async def _connection_of(
    starts: Servers,
    supervisor: Supervisor,
    entry: MountedTool,
    context: object | None,
    began: float,
    timeout: float,
) -> tuple[Connection, AbstractContextManager[None]]:
    """The connection ``entry``'s call goes over (`Clients.connection`), its client's own
    opened within the call's timeout."""
    with anyio.move_on_after(began + timeout - anyio.current_time()):
        return await starts.clients.connection(supervisor, context, entry.name)
    reason = f"its session for this client did not open within {timeout:g} s"
    raise ServerNotRunningError(entry.server, entry.name, reason)


async def _until_up(
    supervisor: Supervisor, entry: MountedTool, deadline: float, timeout: float, starts: Servers
) -> float:
    """Wait, until ``deadline``, for ``supervisor``'s server to serve ``entry``'s call (see
    `call_within`); return the seconds left for the call.

    Raises:
        ServerNotRunningError: It was not up in time, or it did not start.
        ToolRemovedError: Started from a cached list, it no longer lists the tool.
    """
    name = entry.name
    with anyio.CancelScope(deadline=deadline):
        if supervisor.connection.state is ServerState.FAILED:
            starts.lost(supervisor.connection)
        if from_cache := supervisor.dormant:
            starts.wake(supervisor)
        if not supervisor.ready.is_set():
            from_cache = from_cache or supervisor.cached  # a background start under way
            await supervisor.ready.wait()
        if supervisor.restarting:
            reason = "it is restarting and did not come back"
            raise ServerNotRunningError(entry.server, name, reason)
        if supervisor.dormant:
            reason = supervisor.error or "it did not start"
            raise ServerNotRunningError(entry.server, name, reason)
        live = supervisor.connection.tools
        if from_cache and all(tool.name != entry.raw_name for tool in live):
            raise ToolRemovedError(entry.server, name)
        left = deadline - anyio.current_time()
        if left > 0:
            return left
    raise ServerNotRunningError(
        entry.server, name, f"it is (re)starting and was not up within {timeout:g} s"
    )
