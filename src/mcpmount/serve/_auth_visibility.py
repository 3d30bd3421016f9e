"""What a token may see: `NamespaceFilter`, a server middleware over every request.

A token limited to some namespaces (`Grant.namespaces`: a static token's list, or a JWT's
``mcpmount_namespaces`` claim) sees only their tools, prompts, resources and templates;
``tool_search`` finds, and ``call_tool`` calls, only their tools. Naming anything else is
answered exactly as an
unknown name (no suggestions, which could name hidden tools): the client cannot tell a
hidden namespace from one that is not mounted, and a ``subscriptions/listen`` stream gets
no update of a hidden resource. A request without such a token (stdio, no
auth, an unlimited token) passes untouched.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Final, cast

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import CallNext, HandlerResult
from pydantic import BaseModel
from starlette.requests import HTTPConnection

from mcpmount.catalog import split_uri
from mcpmount.errors import UnknownResourceError, UnknownToolError
from mcpmount.registry import Registry
from mcpmount.search import TOOL_SEARCH_NAME
from mcpmount.serve._auth_tokens import Grant
from mcpmount.serve._call_tool import CALL_TOOL_NAME

__all__ = ["NamespaceFilter"]

_RESOURCE_NOT_FOUND: Final = -32002

_META_TOOLS: Final = (TOOL_SEARCH_NAME, CALL_TOOL_NAME)

_LISTS: Final = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
"""A list method's result key and the key of each item that says whose it is."""


class NamespaceFilter:
    """Hide every namespace a request's token may not see (see the module docstring)."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        visible = _visible(ctx)
        if visible is None:
            return await call_next(ctx)
        params = ctx.params or {}
        method = ctx.method
        if method == "tools/call" and params.get("name") == TOOL_SEARCH_NAME:
            return self._found(_as_dict(await call_next(ctx)), visible)
        if method == "subscriptions/listen":
            return await call_next(self._listen_to_visible(ctx, visible))
        self._refuse_hidden(method, params, visible)
        result = await call_next(ctx)
        if method not in _LISTS:
            return result
        key, field = _LISTS[method]
        answer = _as_dict(result)
        items = cast("list[dict[str, Any]]", answer.get(key, []))
        answer[key] = [
            item
            for item in items
            if item.get(field) in _META_TOOLS  # they search and call visible tools only
            or self._owner(method, str(item.get(field))) in visible
        ]
        return answer

    def _refuse_hidden(self, method: str, params: Any, visible: frozenset[str]) -> None:
        """Raise what an unknown name gets when ``params`` name something hidden."""
        name = params.get("name")
        uri = params.get("uri")
        if method == "completion/complete" and isinstance(ref := params.get("ref"), dict):
            ref = cast("dict[str, Any]", ref)
            method = "prompts/get" if ref.get("type") == "ref/prompt" else "resources/read"
            name, uri = ref.get("name"), ref.get("uri")
        if method == "tools/call" and name == CALL_TOOL_NAME:  # the tool it calls
            inner = params.get("arguments")
            name = cast("dict[str, Any]", inner).get("name") if isinstance(inner, dict) else None
            if not isinstance(name, str):
                return  # malformed: the front refuses it
        if method == "tools/call" and self._owner("tools/list", str(name)) not in visible:
            raise MCPError(mcp_types.INVALID_PARAMS, f"no mounted tool is named {name!r}")
        if method == "prompts/get" and self._owner("prompts/list", str(name)) not in visible:
            raise MCPError(mcp_types.INVALID_PARAMS, f"no mounted prompt is named {name!r}")
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe") and (
            self._owner("resources/list", str(uri)) not in visible
        ):
            message = f"cannot route resource {uri!r}: no mounted server owns it"
            raise MCPError(_RESOURCE_NOT_FOUND, message, {"uri": uri})

    def _owner(self, method: str, name: str) -> str | None:
        """The namespace a listed item belongs to; None for none (then it is hidden)."""
        if method == "tools/list":
            try:
                return self._registry.get(name).server
            except UnknownToolError:
                return None
        if method == "prompts/list":  # a namespace never holds "__" (mcpmount.naming)
            namespace, sep, _ = name.partition("__")
            return namespace if sep else None
        try:  # a resource URI, or a template's: both start mcpmount://<namespace>/
            return split_uri(name)[0]
        except UnknownResourceError:
            return None

    def _listen_to_visible(
        self, ctx: ServerRequestContext[Any, Any], visible: frozenset[str]
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
            owned = [u for u in uris if self._owner("resources/list", str(u)) in visible]
            wanted["resourceSubscriptions"] = owned
        return replace(ctx, params={**params, "notifications": wanted})

    def _found(self, result: dict[str, Any], visible: frozenset[str]) -> dict[str, Any]:
        """A ``tool_search`` result holding only visible tools (and no hint: it may name
        others)."""
        found = result.get("structuredContent")
        if not isinstance(found, dict) or result.get("isError"):
            return result
        found = cast("dict[str, Any]", found)
        tools = cast("list[dict[str, Any]]", found.get("tools", []))
        payload = {key: value for key, value in found.items() if key != "hint"}
        payload["tools"] = [
            t for t in tools if self._owner("tools/list", str(t.get("name"))) in visible
        ]
        text = json.dumps(payload, ensure_ascii=False)
        content = [mcp_types.TextContent(type="text", text=text).model_dump(mode="json")]
        return {**result, "structuredContent": payload, "content": content}


def _visible(ctx: ServerRequestContext[Any, Any]) -> frozenset[str] | None:
    """The namespaces the request's token may see; None for every one."""
    request = ctx.request
    if not isinstance(request, HTTPConnection):
        return None
    user = request.scope.get("user")
    if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, Grant):
        return user.access_token.namespaces
    return None


def _as_dict(result: HandlerResult) -> dict[str, Any]:
    """A handler's result as its wire dict (what the SDK's runner would send)."""
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result) if result is not None else {}
