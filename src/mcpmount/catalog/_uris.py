"""Registry URIs: every server's resources under one scheme, routable back to their server.

A resource (or template) URI ``U`` of the server mounted as namespace ``ns`` is published
as ``mcpmount://ns/U``, with ``U`` verbatim: ``file:///a.txt`` of ``fs`` is
``mcpmount://fs/file:///a.txt``, and the template ``file:///{path}`` is
``mcpmount://fs/file:///{path}``, so expanding a registry template yields a registry URI.
Two servers that list the same URI never collide. A registry URI is routed by what
stands between ``mcpmount://`` and the first ``/`` after it (a namespace never holds a
``/``); the rest is sent to that server as it is, with no guessing. Every URI a server
returns (``resource_link`` and embedded ``resource`` blocks in tool results and prompt
messages, ``contents[].uri`` of a read) is rewritten the same way, so a URI the host gets
can always be read back through the registry.

A ``ui://`` URI (an MCP Apps view, which hosts read only under that scheme) keeps it: the
namespace becomes its first segment, so ``ui://get-time/app.html`` of ``clock`` is
``ui://clock/get-time/app.html``, routed the same way (what stands between ``ui://`` and
the next ``/``); `mcpmount.catalog._apps` rewrites the tools' references to it alike.

A server mounted with ``prefix = false`` keeps its own URIs, in its lists and in what it
returns (``prefix=False`` below leaves them as they are); the registry routes such a URI
by its table of those servers' URIs and templates (`Library.owner_of_uri`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import mcp_types

from mcpmount import naming
from mcpmount.errors import UnknownResourceError

__all__ = [
    "UI_SCHEME",
    "URI_SCHEME",
    "published_meta",
    "registry_uri",
    "rewrite_blocks",
    "rewrite_call",
    "rewrite_prompt",
    "rewrite_read",
    "split_uri",
    "ui_meta",
]

URI_SCHEME = "mcpmount://"

UI_SCHEME = "ui://"
"""The scheme of MCP Apps views: kept through the registry (see the module docstring)."""


def registry_uri(namespace: str, uri: str, *, prefix: bool = True) -> str:
    """Return the registry URI of ``uri`` of server ``namespace``: ``mcpmount://ns/uri``,
    ``ui://ns/rest`` for ``ui://rest`` (``uri`` itself without ``prefix``)."""
    if not prefix:
        return uri
    if uri.startswith(UI_SCHEME):
        return f"{UI_SCHEME}{namespace}/{uri[len(UI_SCHEME) :]}"
    return f"{URI_SCHEME}{namespace}/{uri}"


def split_uri(uri: str) -> tuple[str, str]:
    """Return ``(namespace, the server's own URI)`` of a registry URI.

    Raises:
        UnknownResourceError: ``uri`` is neither ``mcpmount://<namespace>/<uri>`` nor
            ``ui://<namespace>/<rest>``.
    """
    scheme = UI_SCHEME if uri.startswith(UI_SCHEME) else URI_SCHEME
    if not uri.startswith(scheme):
        raise UnknownResourceError(
            uri, f"registry URIs start with {URI_SCHEME}<namespace>/ or {UI_SCHEME}<namespace>/"
        )
    namespace, slash, raw = uri[len(scheme) :].partition("/")
    if not slash or naming.namespace_problem(namespace) is not None:
        raise UnknownResourceError(uri, f"it is not {scheme}<namespace>/<uri>")
    return namespace, f"{UI_SCHEME}{raw}" if scheme == UI_SCHEME else raw


_WITH_URI = (mcp_types.ResourceLink, mcp_types.EmbeddedResource)


def rewrite_blocks(
    namespace: str, blocks: Sequence[mcp_types.ContentBlock], *, prefix: bool = True
) -> list[mcp_types.ContentBlock] | None:
    """Return ``blocks`` with every resource URI made a registry URI; None if none has one
    (or without ``prefix``: they stay the server's own)."""
    if not prefix:
        return None
    for block in blocks:  # a loop, not any(...): no generator for every call's blocks
        if isinstance(block, _WITH_URI):
            break
    else:
        return None
    rewritten: list[mcp_types.ContentBlock] = []
    for block in blocks:
        match block:
            case mcp_types.ResourceLink():
                block = block.model_copy(update={"uri": registry_uri(namespace, block.uri)})
            case mcp_types.EmbeddedResource():
                inner = block.resource
                inner = inner.model_copy(update={"uri": registry_uri(namespace, inner.uri)})
                block = block.model_copy(update={"resource": inner})
            case _:
                pass
        rewritten.append(block)
    return rewritten


def rewrite_call(
    namespace: str, result: mcp_types.CallToolResult, *, prefix: bool = True
) -> mcp_types.CallToolResult:
    """Return a tool result with its resource URIs made registry URIs (see `registry_uri`),
    those of its blocks and the views its ``_meta`` names (`published_meta`)."""
    update: dict[str, object] = {}
    if (blocks := rewrite_blocks(namespace, result.content, prefix=prefix)) is not None:
        update["content"] = blocks
    if (meta := published_meta(namespace, result.meta, prefix=prefix)) is not result.meta:
        update["meta"] = meta
    return result.model_copy(update=update) if update else result


_VIEW_KEYS: Final = ("ui/resourceUri", "openai/outputTemplate")
"""``_meta`` keys whose value is an MCP Apps view's URI, beside ``ui.resourceUri``."""


def published_meta(
    namespace: str, meta: dict[str, Any] | None, *, prefix: bool = True
) -> dict[str, Any] | None:
    """``meta`` (of a tool or a tool result) with the ``ui://`` URIs of the views it names
    as the registry publishes them: ``ui.resourceUri``, the older flat ``ui/resourceUri``
    and the OpenAI Apps SDK's ``openai/outputTemplate``. The same object if none changes."""
    if not prefix or not meta:
        return meta
    changed = dict(meta)
    for key in _VIEW_KEYS:
        if isinstance(uri := meta.get(key), str) and uri.startswith(UI_SCHEME):
            changed[key] = registry_uri(namespace, uri)
    ui = ui_meta(meta)
    if isinstance(uri := ui.get("resourceUri"), str) and uri.startswith(UI_SCHEME):
        changed["ui"] = {**ui, "resourceUri": registry_uri(namespace, uri)}
    return changed if changed != meta else meta


def ui_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ui`` object of a ``_meta`` (empty if it has none)."""
    ui = meta.get("ui")
    return cast("dict[str, Any]", ui) if isinstance(ui, dict) else {}


def rewrite_prompt(
    namespace: str, result: mcp_types.GetPromptResult, *, prefix: bool = True
) -> mcp_types.GetPromptResult:
    """Return a prompt with the resource URIs of its messages made registry URIs."""
    if not prefix:
        return result
    messages: list[mcp_types.PromptMessage] = []
    for message in result.messages:
        blocks = rewrite_blocks(namespace, [message.content])
        messages.append(
            message if blocks is None else message.model_copy(update={"content": blocks[0]})
        )
    return result.model_copy(update={"messages": messages})


def rewrite_read(
    namespace: str, result: mcp_types.ReadResourceResult, *, prefix: bool = True
) -> mcp_types.ReadResourceResult:
    """Return a read result whose ``contents[].uri`` are registry URIs."""
    if not prefix:
        return result
    contents = [
        c.model_copy(update={"uri": registry_uri(namespace, c.uri)}) for c in result.contents
    ]
    return result.model_copy(update={"contents": contents})
