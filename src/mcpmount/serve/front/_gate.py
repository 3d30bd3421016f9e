"""The request side of access: `Gate`, a server middleware in front of every handler.

For a principal limited to some namespaces or by a policy (`mcpmount.serve.access`), a
request that names a hidden tool, prompt or resource (``tools/call``, ``call_tool``'s inner
name, ``prompts/get``, ``resources/read``, ``resources/subscribe`` and ``unsubscribe``,
``completion/complete``'s reference) is refused before any handler runs,
with exactly the error a name that is not mounted gets (`Door.unknown`); a
``subscriptions/listen`` asks for the visible resources' updates only; and every list
(``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``)
holds only what it may see. A principal that sees all passes untouched.

What the handlers answer past the gate (search, suggestions, notifications) asks the same
`Door` and `Principal`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final, cast

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from pydantic import BaseModel

from mcpmount.codemode import RUN_CODE_NAME
from mcpmount.search import TOOL_SEARCH_NAME
from mcpmount.serve.access import Door, NameKind, Principal, principal_of, resource_not_found
from mcpmount.serve.front._call_tool import CALL_TOOL_NAME

__all__ = ["Gate"]

_META_TOOLS: Final = (TOOL_SEARCH_NAME, CALL_TOOL_NAME, RUN_CODE_NAME)

_LISTS: Final[dict[str, tuple[str, str, NameKind]]] = {
    "tools/list": ("tools", "name", "tool"),
    "prompts/list": ("prompts", "name", "prompt"),
    "resources/list": ("resources", "uri", "resource"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate", "resource"),
}
"""A list method's result key, the key of each item that says whose it is, and its kind."""

_NAMED: Final[dict[str, NameKind]] = {
    "tools/call": "tool",
    "prompts/get": "prompt",
    "resources/read": "resource",
    "resources/subscribe": "resource",
    "resources/unsubscribe": "resource",
}


class Gate:
    """Refuse hidden names and filter lists for limited principals (see the module docstring)."""

    def __init__(self, door: Door) -> None:
        self._door = door

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        principal = principal_of(ctx)
        if not self._door.limits(principal):
            return await call_next(ctx)
        params = ctx.params or {}
        method = ctx.method
        if method == "subscriptions/listen":
            return await call_next(self._listen_to_visible(ctx, principal))
        if method == "tools/call":
            ctx = self._by_public_name(ctx, principal)
            params = ctx.params or {}
        self._refuse_hidden(principal, method, params, ctx.protocol_version)
        result = await call_next(ctx)
        if method not in _LISTS:
            return result
        key, field, kind = _LISTS[method]
        answer = _as_dict(result)
        items = cast("list[dict[str, Any]]", answer.get(key, []))
        answer[key] = [
            item
            for item in items
            if item.get(field) in _META_TOOLS  # they search and call visible tools only
            or self._door.sees(principal, kind, str(item.get(field)))
        ]
        return answer

    def _by_public_name(
        self, ctx: ServerRequestContext[Any, Any], principal: Principal
    ) -> ServerRequestContext[Any, Any]:
        """A ``tools/call`` of the raw name an app calls its tool by, as that tool's public
        name, resolved among the apps of the servers ``principal`` sees (docs: MCP Apps)."""
        params = ctx.params or {}
        name = params.get("name")
        if not isinstance(name, str) or name in _META_TOOLS:
            return ctx
        public = self._door.called(principal, name)
        if public is None or public == name:
            return ctx
        return replace(ctx, params={**params, "name": public})

    def _refuse_hidden(
        self, principal: Principal, method: str, params: Any, protocol_version: str | None
    ) -> None:
        """Raise what an unknown name gets (in the client's era) when ``params`` name
        something hidden."""
        if method == "completion/complete" and isinstance(ref := params.get("ref"), dict):
            ref = cast("dict[str, Any]", ref)
            if ref.get("type") == "ref/prompt":
                method, params = "prompts/get", {"name": ref.get("name")}
            else:
                method, params = "resources/read", {"uri": ref.get("uri")}
        if method == "tools/call" and params.get("name") == CALL_TOOL_NAME:  # the tool it calls
            inner = params.get("arguments")
            name = cast("dict[str, Any]", inner).get("name") if isinstance(inner, dict) else None
            if not isinstance(name, str):
                return  # malformed: the front refuses it
            params = {"name": name}
        kind = _NAMED.get(method)
        if kind is None:
            return
        name = params.get("uri" if kind == "resource" else "name")
        if not isinstance(name, str) or name in _META_TOOLS:
            return  # malformed (the SDK or the front refuses it), or a meta-tool
        if self._door.sees(principal, kind, name):
            return
        if kind == "resource":
            message = f"cannot route resource {name!r}: no mounted server owns it"
            raise MCPError(resource_not_found(protocol_version), message, {"uri": name})
        raise MCPError(mcp_types.INVALID_PARAMS, str(self._door.unknown(principal, kind, name)))

    def _listen_to_visible(
        self, ctx: ServerRequestContext[Any, Any], principal: Principal
    ) -> ServerRequestContext[Any, Any]:
        """A ``subscriptions/listen`` asking for the visible resources' updates only (the
        acknowledgement then names only those)."""
        params = dict(ctx.params or {})
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            return ctx  # malformed: the SDK refuses it
        wanted = dict(cast("dict[str, Any]", wanted))
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list):
            uris = cast("list[object]", uris)
            wanted["resourceSubscriptions"] = [
                u for u in uris if self._door.sees(principal, "resource", str(u))
            ]
        return replace(ctx, params={**params, "notifications": wanted})


def _as_dict(result: HandlerResult) -> dict[str, Any]:
    """A handler's result as its wire dict (what the SDK's runner would send)."""
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result) if result is not None else {}
