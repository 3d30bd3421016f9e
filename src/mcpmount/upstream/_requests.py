"""Requests other than tool calls: a prompt, a resource read, a completion, a subscription.

Each is sent with the server's own (raw) name or URI, and fails in the registry's words,
as a tool call does: ``kind`` (``"prompt"``, ``"resource"``) and ``name`` (the public name
or URI) go into every error, a result over ``max_result_bytes`` is refused, and hidden
characters in a prompt's messages or a resource's contents are stripped or refused
(``hidden_text``, `Connection.answers`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import mcp_types
import pydantic
from mcp import Client, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.errors import (
    CallTimeoutError,
    ResultTooLargeError,
    ServerCrashedError,
    ServerNotRunningError,
    UpstreamError,
    describe_invalid,
)
from mcpmount.upstream._connection import Connection
from mcpmount.upstream._state import ServerState

__all__ = ["request", "set_subscription"]

_Result = TypeVar("_Result", bound=pydantic.BaseModel)


async def request(
    connection: Connection,
    kind: str,
    name: str,
    timeout: float,
    send: Callable[[Client], Awaitable[_Result]],
    *,
    asks: bool = False,
    context: object | None = None,
) -> _Result:
    """Run ``send`` on the connection's client within ``timeout``, in the registry's words.

    With ``asks`` (a prompt or a resource read, which a server may answer by asking its
    client), what the server asks meanwhile is attributed to this request as to a tool
    call (`Connection.call`): its handlers get ``name`` as `Asker.tool`, and ``context``.
    Other requests stay out of the handshake era's count of calls in flight.

    Raises:
        ServerNotRunningError: The server is not ready; nothing was sent.
        CallTimeoutError: No answer within ``timeout``.
        ServerCrashedError: The connection was lost while the request was in flight.
        UpstreamError: The server answered with a JSON-RPC error or an invalid result.
        ResultTooLargeError: The result exceeds ``max_result_bytes``.
        ResultWithheldError: It holds hidden characters, under ``hidden_text = "refuse"``.
    """
    server = connection.server
    client = connection.client
    if client is None or connection.state is not ServerState.READY:
        reason = connection.error or f"it is {connection.state}"
        raise ServerNotRunningError(server, name, reason, kind=kind)
    try:
        with anyio.fail_after(timeout):
            if asks:
                with connection.asking.calling(name, context):
                    result = await send(client)
            else:
                result = await send(client)
    except TimeoutError:
        raise CallTimeoutError(server, name, timeout, kind=kind) from None
    except MCPError as exc:
        if exc.code == mcp_types.REQUEST_TIMEOUT:
            raise CallTimeoutError(server, name, timeout, kind=kind) from None
        if exc.code == mcp_types.CONNECTION_CLOSED:
            reason = await connection.transport.wait_failure() or "connection closed"
            raise ServerCrashedError(server, name, reason, kind=kind) from None
        message = connection.spec.redact(exc.message)
        raise UpstreamError(server, name, exc.code, message, kind=kind) from None
    except pydantic.ValidationError as exc:
        message = f"its result is invalid: {describe_invalid(exc)}"
        raise UpstreamError(server, name, mcp_types.INTERNAL_ERROR, message, kind=kind) from None
    limit = connection.effective.max_result_bytes
    size = len(result.model_dump_json(by_alias=True, exclude_none=True))
    if size > limit:
        raise ResultTooLargeError(server, name, size, limit, kind=kind)
    return connection.answers.clean(kind, name, result)


async def set_subscription(
    connection: Connection, uri: str, name: str, on: bool, timeout: float
) -> None:
    """Subscribe to (``on``) or unsubscribe from updates of the raw ``uri``.

    Through 2025-11-25 this sends ``resources/subscribe`` (``unsubscribe``); on
    2026-07-28 it opens the connection's listen stream again with the new set of URIs.

    Raises:
        What `request` raises.
    """
    feed = connection.feed
    before = uri in feed.subscriptions
    if on:
        feed.subscriptions.add(uri)
    else:
        feed.subscriptions.discard(uri)
    client = connection.client
    if client is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if before != on:
            with anyio.move_on_after(timeout):
                await feed.resubscribe().wait()
                return
            raise CallTimeoutError(connection.server, name, timeout, kind="resource")
        return

    async def send(client: Client) -> mcp_types.EmptyResult:
        message = (
            mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=uri))
            if on
            else mcp_types.UnsubscribeRequest(params=mcp_types.UnsubscribeRequestParams(uri=uri))
        )
        return await client.session.send_request(message, mcp_types.EmptyResult)

    try:
        await request(connection, "resource", name, timeout, send)
    except Exception:
        if before != on:  # undo: the server did not take it
            (feed.subscriptions.add if before else feed.subscriptions.discard)(uri)
        raise
