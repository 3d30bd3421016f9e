"""`CallLog`: the server middleware that writes one record for every request it sees.

It wraps every request but the SDK's span (so that an OpenTelemetry record carries the
request's trace), outside the gate, so that a refusal is recorded too: a hidden name is
answered exactly as an unknown one, but the log, which only the operator reads, says
``denied`` (the name exists; `Door.sees` says the principal, or the policy, hides it).
A call refused by a rate limit or a concurrency cap (`mcpmount.serve.quotas`) is
``rate_limited``.
Notifications are not requests and are not recorded.

What a record names is read from the request's raw params, before any validation: the
public name or URI, and the arguments only as a keyed digest. Sizes are the params' and
the result's JSON, measured with pydantic-core's serializer (the transport serializes
them again, with its envelope).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final, cast

import anyio
import pydantic_core
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from pydantic import BaseModel, ValidationError

from mcpmount.serve.access import RESOURCE_NOT_FOUND, Door, NameKind, principal_of
from mcpmount.serve.calllog._record import DigestKey, Outcome, Record, record_of
from mcpmount.serve.calllog._sinks import Sink
from mcpmount.serve.front import CALL_TOOL_NAME
from mcpmount.serve.quotas import LIMIT_META

__all__ = ["CallLog"]

_NAMED: Final[dict[str, NameKind]] = {
    "tools/call": "tool",
    "prompts/get": "prompt",
    "resources/read": "resource",
    "resources/subscribe": "resource",
    "resources/unsubscribe": "resource",
}
"""The methods that name one tool, prompt or resource, and which."""

_NOT_FOUND: Final = (-32602, RESOURCE_NOT_FOUND)
"""The codes an unknown (or hidden) name is answered with, in either era."""


class CallLog:
    """Write a record of every request to ``sink`` (see the module docstring).

    Args:
        sink: Where records go.
        door: The served registry's door: whose a name is, and who may see it.
        key: The arguments' digest key.
    """

    def __init__(self, sink: Sink, door: Door, key: DigestKey) -> None:
        self.sink = sink
        self._door = door
        self._key = key

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:  # a notification
            return await call_next(ctx)
        start, began = time.time(), time.perf_counter()
        outcome: Outcome = "ok"
        code: int | None = None
        size = 0
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            outcome, code = "error", exc.error.code
            size = len(pydantic_core.to_json(exc.error, exclude_none=True))
            if code in _NOT_FOUND:
                outcome = self._not_found(ctx)
            elif _limited(exc.error.data):
                outcome = "rate_limited"  # a task-augmented call past a limit
            raise
        except ValidationError:
            outcome = "invalid"
            raise
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            if outcome != "ok":
                self.sink.write(self._record(ctx, start, began, outcome, code, size))
        if isinstance(result, BaseModel):  # a middleware's own answer (a limit's refusal)
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        answer = result if result is not None else {}
        if answer.get("isError") is True:
            outcome = "rate_limited" if _limited(answer.get("_meta")) else "tool_error"
        elif answer.get("resultType") == "input_required":
            outcome = "input_required"
        size = len(pydantic_core.to_json(result))
        self.sink.write(self._record(ctx, start, began, outcome, None, size))
        return result

    def _record(
        self,
        ctx: ServerRequestContext[Any, Any],
        start: float,
        began: float,
        outcome: Outcome,
        code: int | None,
        bytes_out: int,
    ) -> Record:
        params = ctx.params or {}
        name, server, arguments = self._named(ctx.method, params)
        return record_of(
            start=start,
            principal=principal_of(ctx).identity,
            method=ctx.method,
            name=name,
            server=server,
            outcome=outcome,
            code=code,
            duration=time.perf_counter() - began,
            bytes_in=len(pydantic_core.to_json(ctx.params)) if ctx.params is not None else 0,
            bytes_out=bytes_out,
            args=self._key.digest(arguments) if arguments is not None else None,
        )

    def _named(
        self, method: str, params: Mapping[str, Any]
    ) -> tuple[str | None, str | None, object | None]:
        """The name (or URI) ``params`` name, its server, and its arguments (None: none)."""
        kind, name, arguments = _what(method, params)
        if kind is None or name is None:
            return None, None, arguments
        server = self._door.owner(kind, name)
        return name, server, arguments

    def _not_found(self, ctx: ServerRequestContext[Any, Any]) -> Outcome:
        """``unknown``, ``denied`` or ``error``: what an answer "no such name" was."""
        kind, name, _ = _what(ctx.method, ctx.params or {})
        if kind is None or name is None:
            return "error"
        if self._door.owner(kind, name) is None:
            return "unknown"
        if not self._door.sees(principal_of(ctx), kind, name):
            return "denied"
        return "error"


def _what(method: str, params: Mapping[str, Any]) -> tuple[NameKind | None, str | None, object]:
    """The kind of name a request names, the name, and its arguments (each None if none)."""
    if method == "completion/complete":
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, Mapping):
            return None, None, argument
        ref = cast("Mapping[str, Any]", ref)
        if ref.get("type") == "ref/prompt":
            return "prompt", _text(ref.get("name")), argument
        return "resource", _text(ref.get("uri")), argument
    kind = _NAMED.get(method)
    if kind is None:
        return None, None, None
    if kind == "resource":
        return kind, _text(params.get("uri")), None
    name, arguments = params.get("name"), params.get("arguments")
    if name == CALL_TOOL_NAME and isinstance(arguments, Mapping):
        inner = cast("Mapping[str, Any]", arguments)
        name, arguments = inner.get("name"), inner.get("arguments")
    return kind, _text(name), arguments


def _limited(meta: object) -> bool:
    """Whether ``meta`` (a refusal's ``_meta``, or its error's data) says a limit refused it."""
    return isinstance(meta, Mapping) and LIMIT_META in meta


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
