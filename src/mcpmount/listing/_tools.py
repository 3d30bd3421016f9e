"""Untrusted tool lists: follow every page, then check each tool against the limits.

Everything a server lists is data from a third-party program. A server whose list breaks
a rule is refused whole (all-or-nothing), with an error naming the server and the tool;
hidden characters in what the model reads are stripped, or refuse it (`Cleaner`);
only names that break SEP-986 may instead be skipped or sanitized, when the server's
policy says so.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

import mcp_types
import pydantic
from mcp import Client

from mcpmount.audit import Cleaner
from mcpmount.config import EffectiveSettings
from mcpmount.errors import ToolListError, describe_invalid
from mcpmount.listing._freshness import Freshness
from mcpmount.listing._vetting import SchemaVetting
from mcpmount.naming import TOOL_NAME_PATTERN

__all__ = [
    "check_tools",
    "list_all_tools",
    "list_pages",
    "needs_task",
    "schema_depth",
    "schema_problem",
]

logger = logging.getLogger(__name__)


async def list_all_tools(
    client: Client, server: str, settings: EffectiveSettings, freshness: Freshness | None = None
) -> list[mcp_types.Tool]:
    """Return every tool ``server`` lists, following ``nextCursor`` to the last page; each
    page's cache hints go to ``freshness``.

    Raises:
        ToolListError: If the list is invalid, too long, has too many pages, or its
            cursor repeats (a server that would paginate forever).
    """

    async def page(cursor: str | None) -> tuple[list[mcp_types.Tool], str | None]:
        listed = await client.list_tools(cursor=cursor)
        if freshness is not None:
            freshness.saw(listed)
        return listed.tools, listed.next_cursor

    return await list_pages(page, server, "tools/list", settings.max_pages, settings.max_tools)


_Item = TypeVar("_Item")


async def list_pages(
    page: Callable[[str | None], Awaitable[tuple[list[_Item], str | None]]],
    server: str,
    method: str,
    max_pages: int,
    max_items: int,
) -> list[_Item]:
    """Return every item a paginated list (``method``) holds, following cursors to the end.

    ``page(cursor)`` fetches one page: its items and the next cursor. The limit on items
    is named after ``method``'s kind (``tools/list`` -> ``max_tools``).

    Raises:
        ToolListError: If an answer is invalid, the list has more than ``max_items``
            items or ``max_pages`` pages, or its cursor repeats (pages that never end).
    """
    kind = method.split("/")[0] if method != "resources/templates/list" else "resources"
    items: list[_Item] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(max_pages):
        try:
            found, cursor = await page(cursor)
        except pydantic.ValidationError as exc:
            raise ToolListError(
                server, f"its {method} answer is invalid: {describe_invalid(exc)}"
            ) from None
        items += found
        if len(items) > max_items:
            raise ToolListError(
                server,
                f"it lists more than {max_items} {kind} (max_{kind}); raise the limit "
                "or split the server",
            )
        if cursor is None:
            return items
        if cursor in seen:
            raise ToolListError(server, f"its {method} cursor repeats, so its pages never end")
        seen.add(cursor)
    raise ToolListError(server, f"its {method} goes past {max_pages} pages (max_pages)")


def check_tools(
    server: str,
    tools: Sequence[mcp_types.Tool],
    settings: EffectiveSettings,
    invalid_names: Literal["refuse", "skip", "sanitize"] = "refuse",
    filtered_out: Callable[[str], bool] = lambda _: False,
    schemas: SchemaVetting | None = None,
    cleaner: Cleaner | None = None,
) -> list[mcp_types.Tool]:
    """Return the tools that may be registered, or refuse the whole server.

    A tool for which ``filtered_out(raw_name)`` holds is dropped first, unchecked: the
    user turned it off, so nothing about it may keep the server from mounting. A name that
    breaks SEP-986 (checked after trimming surrounding whitespace) refuses the server, or
    with ``invalid_names`` drops the tool (``"skip"``) or keeps it (``"sanitize"``: its
    public name is sanitized and suffixed, calls use the raw name).
    Each distinct schema is checked once per ``schemas`` (the registry's verdicts; without
    it, once per call). Each tool passes ``cleaner`` (the caller warns of what it found);
    without one, hidden characters are stripped with a warning.

    Raises:
        ToolListError: On an invalid name (with ``invalid_names == "refuse"``), a duplicate
            name, a description over ``max_description_bytes``, a schema nested deeper
            than ``max_schema_depth``, a schema that is not a valid JSON Schema, or hidden
            characters under a cleaner that refuses them.
    """
    if schemas is None:
        schemas = SchemaVetting()
    own_cleaner = cleaner is None
    if cleaner is None:
        cleaner = Cleaner(server)
    kept: list[mcp_types.Tool] = []
    names: set[str] = set()
    for tool in tools:
        name = tool.name
        if filtered_out(name):
            continue
        if not TOOL_NAME_PATTERN.match(name.strip()):
            reason = "its name is not 1-128 characters of A-Z a-z 0-9 . _ - (SEP-986)"
            if invalid_names == "skip":
                logger.warning("server %r: skipping tool %r: %s", server, name, reason)
                continue
            if invalid_names == "refuse":
                raise ToolListError(
                    server,
                    f'{reason}; set invalid_names = "sanitize" to mount it under a valid '
                    'name, or "skip" to drop such tools',
                    tool=name,
                )
            logger.info("server %r: tool %r gets a sanitized public name: %s", server, name, reason)
        if name in names:
            raise ToolListError(server, "it is listed twice", tool=name)
        names.add(name)
        depth = max(schema_depth(tool.input_schema), schema_depth(tool.output_schema))
        if depth > settings.max_schema_depth:
            raise ToolListError(
                server,
                f"its schema is nested {depth} levels deep, over max_schema_depth "
                f"({settings.max_schema_depth})",
                tool=name,
            )
        tool = cleaner.tool(tool)  # its schemas' depth is bounded now
        size = len((tool.description or "").encode("utf-8", "surrogatepass"))
        if size > settings.max_description_bytes:
            raise ToolListError(
                server,
                f"its description is {size} bytes, over max_description_bytes "
                f"({settings.max_description_bytes})",
                tool=name,
            )
        if (problem := schema_problem(tool, schemas)) is not None:
            raise ToolListError(server, problem, tool=name)
        kept.append(tool)
    if own_cleaner:
        cleaner.warn()
    return kept


def needs_task(tool: mcp_types.Tool) -> bool:
    """Return whether ``tool`` can only be called as a task (``taskSupport: "required"``).

    ``"optional"`` and ``"forbidden"`` (or no ``execution`` at all) are plain calls;
    `Connection.call` runs such a tool as a task (``as_task``).
    """
    return tool.execution is not None and tool.execution.task_support == "required"


def schema_problem(tool: mcp_types.Tool, schemas: SchemaVetting) -> str | None:
    """Return why the tool's input or output schema is not a valid JSON Schema, if it is not."""
    for key, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        if schema is not None and (problem := schemas.problem(schema)) is not None:
            return f"its {key} is not a valid JSON Schema ({problem})"
    return None


def schema_depth(value: object) -> int:
    """Return how deeply JSON containers nest in ``value`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: list[object]
        if isinstance(item, dict):
            children = list(item.values())  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, list):
            children = list(item)  # pyright: ignore[reportUnknownArgumentType]
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest
