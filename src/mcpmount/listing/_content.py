"""A server's prompts, resources and resource templates: listed in full, checked as untrusted.

A server that advertises ``prompts`` or ``resources`` in its capabilities is listed at
mount (and again when it says a list changed) through the same pager and page limit as
its tools (`list_pages`). Every definition is third-party data and is checked like a
tool: a prompt name follows SEP-986 and the server's ``invalid_names`` policy; names and
URIs are unique; text fits ``max_description_bytes``; counts fit ``max_prompts`` and
``max_resources``; hidden characters in their text are stripped or refuse the server
(`Cleaner`). A list that breaks a rule refuses the server whole (`ToolListError` naming
the prompt or resource), as a tool list does.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import mcp_types
from mcp import Client, MCPError

from mcpmount.audit import Cleaner
from mcpmount.config import EffectiveSettings, ServerSpec
from mcpmount.errors import ToolListError
from mcpmount.listing._freshness import Freshness
from mcpmount.listing._tools import list_pages
from mcpmount.naming import TOOL_NAME_PATTERN

__all__ = ["ServerContent", "check_content", "list_content"]

MAX_URI_CHARS = 4096
"""The longest resource URI or URI template a server may list."""

MAX_PROMPT_ARGUMENTS = 128
"""The most arguments one prompt may declare."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_Item = TypeVar("_Item")


@dataclass(frozen=True, slots=True)
class ServerContent:
    """What a server offers besides tools, checked, under its own (raw) names and URIs."""

    prompts: tuple[mcp_types.Prompt, ...] = ()
    resources: tuple[mcp_types.Resource, ...] = ()
    templates: tuple[mcp_types.ResourceTemplate, ...] = ()
    subscribe: bool = field(default=False, compare=False)
    """Whether the server supports subscribing to resource updates."""


async def list_content(
    client: Client,
    server: str,
    spec: ServerSpec,
    settings: EffectiveSettings,
    cleaner: Cleaner | None = None,
    freshness: Freshness | None = None,
) -> ServerContent:
    """List and check every prompt, resource and template the server's capabilities offer.

    Each definition passes ``cleaner`` (see `check_content`); each page's cache hints go
    to ``freshness``.

    Raises:
        ToolListError: A list is invalid, too long, endless, failed with a JSON-RPC error
            other than "method not found" (which counts as an empty list), or one of its
            definitions breaks a rule.
    """
    capabilities = client.server_capabilities
    prompts: list[mcp_types.Prompt] = []
    resources: list[mcp_types.Resource] = []
    templates: list[mcp_types.ResourceTemplate] = []
    pages, most = settings.max_pages, settings.max_resources
    if capabilities.prompts is not None:

        async def prompt_page(cursor: str | None) -> tuple[list[mcp_types.Prompt], str | None]:
            listed = await client.list_prompts(cursor=cursor)
            if freshness is not None:
                freshness.saw(listed)
            return listed.prompts, listed.next_cursor

        prompts = await _listed(
            prompt_page, server, spec, "prompts/list", pages, settings.max_prompts
        )
    if capabilities.resources is not None:

        async def resource_page(cursor: str | None) -> tuple[list[mcp_types.Resource], str | None]:
            listed = await client.list_resources(cursor=cursor)
            if freshness is not None:
                freshness.saw(listed)
            return listed.resources, listed.next_cursor

        async def template_page(
            cursor: str | None,
        ) -> tuple[list[mcp_types.ResourceTemplate], str | None]:
            listed = await client.list_resource_templates(cursor=cursor)
            if freshness is not None:
                freshness.saw(listed)
            return listed.resource_templates, listed.next_cursor

        resources = await _listed(resource_page, server, spec, "resources/list", pages, most)
        method = "resources/templates/list"
        templates = await _listed(template_page, server, spec, method, pages, most)
    subscribe = capabilities.resources is not None and bool(capabilities.resources.subscribe)
    content = ServerContent(tuple(prompts), tuple(resources), tuple(templates), subscribe)
    return check_content(server, content, settings, spec.invalid_names, cleaner)


async def _listed(
    page: Callable[[str | None], Awaitable[tuple[list[_Item], str | None]]],
    server: str,
    spec: ServerSpec,
    method: str,
    max_pages: int,
    max_items: int,
) -> list[_Item]:
    try:
        return await list_pages(page, server, method, max_pages, max_items)
    except MCPError as exc:
        if exc.code == mcp_types.METHOD_NOT_FOUND:
            return []
        if exc.code in (mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT):
            raise  # the connection's trouble, reported as such
        message = spec.redact(exc.message)
        raise ToolListError(
            server, f"its {method} failed with error {exc.code}: {message}"
        ) from None


def check_content(
    server: str,
    content: ServerContent,
    settings: EffectiveSettings,
    invalid_names: str = "refuse",
    cleaner: Cleaner | None = None,
) -> ServerContent:
    """Return the content that may be registered, or refuse the whole server.

    A prompt whose name breaks SEP-986 is skipped under ``invalid_names = "skip"`` and
    refused under ``"refuse"``; any other policy leaves it to the naming rules. Each
    definition passes ``cleaner`` (the caller warns of what it found); without one, hidden
    characters are stripped with a warning.

    Raises:
        ToolListError: On a refused prompt name, a duplicate name or URI, text over
            ``max_description_bytes``, too many prompt arguments, a URI that is empty,
            over `MAX_URI_CHARS` or holds control characters, or hidden characters under
            a cleaner that refuses them.
    """
    own_cleaner = cleaner is None
    if cleaner is None:
        cleaner = Cleaner(server)
    limit = settings.max_description_bytes
    prompts: list[mcp_types.Prompt] = []
    for prompt in _unique(server, content.prompts, lambda p: p.name, "prompt"):
        if not TOOL_NAME_PATTERN.match(prompt.name.strip()):
            if invalid_names == "skip":
                continue
            if invalid_names == "refuse":
                reason = "its name is not 1-128 characters of A-Z a-z 0-9 . _ - (SEP-986)"
                hint = '; set invalid_names = "sanitize" (or "skip") to keep (or drop) it'
                raise ToolListError(server, reason + hint, tool=prompt.name, kind="prompt")
        prompt = cleaner.prompt(prompt)  # before the argument names are compared
        arguments = prompt.arguments or []
        if len(arguments) > MAX_PROMPT_ARGUMENTS:
            problem = f"it declares {len(arguments)} arguments, over {MAX_PROMPT_ARGUMENTS}"
            raise ToolListError(server, problem, tool=prompt.name, kind="prompt")
        if len({a.name for a in arguments}) != len(arguments):
            raise ToolListError(
                server, "it declares an argument twice", tool=prompt.name, kind="prompt"
            )
        texts = [prompt.title, prompt.description]
        texts += [t for a in arguments for t in (a.name, a.title, a.description)]
        _check_texts(server, "prompt", prompt.name, texts, limit)
        prompts.append(prompt)
    resources = _unique(server, content.resources, lambda r: r.uri, "resource")
    templates = _unique(server, content.templates, lambda t: t.uri_template, "resource template")
    for kind, uri in [
        *(("resource", r.uri) for r in resources),
        *(("resource template", t.uri_template) for t in templates),
    ]:
        if not uri or len(uri) > MAX_URI_CHARS or _CONTROL.search(uri):
            problem = f"its URI must be 1-{MAX_URI_CHARS} characters without control characters"
            raise ToolListError(server, problem, tool=uri[:200], kind=kind)
    resources = [cleaner.resource(r) for r in resources]
    templates = [cleaner.template(t) for t in templates]
    for kind, uri, texts in [
        *(("resource", r.uri, [r.name, r.title, r.description]) for r in resources),
        *(
            ("resource template", t.uri_template, [t.name, t.title, t.description])
            for t in templates
        ),
    ]:
        _check_texts(server, kind, uri, texts, limit)
    if own_cleaner:
        cleaner.warn()
    return ServerContent(tuple(prompts), tuple(resources), tuple(templates), content.subscribe)


def _unique(
    server: str, items: Iterable[_Item], key: Callable[[_Item], str], kind: str
) -> list[_Item]:
    seen: set[str] = set()
    kept: list[_Item] = []
    for item in items:
        if (name := key(item)) in seen:
            raise ToolListError(server, "it is listed twice", tool=name, kind=kind)
        seen.add(name)
        kept.append(item)
    return kept


def _check_texts(
    server: str, kind: str, name: str, texts: Iterable[str | None], limit: int
) -> None:
    for text in texts:
        size = len((text or "").encode("utf-8", "surrogatepass"))
        if size > limit:
            problem = f"a text of it is {size} bytes, over max_description_bytes ({limit})"
            raise ToolListError(server, problem, tool=name, kind=kind)
