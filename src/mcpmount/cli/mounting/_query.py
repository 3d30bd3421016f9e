"""The commands that query the mounted tools: ``tools``, ``search`` and ``call``.

Server-provided text (names, descriptions, results) is printed through `shown` and
`print_json`: never as markup, and with its control characters visible.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, cast

import mcp_types
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcpmount.cli._exit import EXIT_FAILED, EXIT_OK, UsageError
from mcpmount.cli._shown import counted, print_json, shown, widest
from mcpmount.cli.mounting._opening import listing, mounted, namespace_of, needed_for
from mcpmount.cli.mounting._progress import progress_bar, search_ready
from mcpmount.config import RegistryConfig
from mcpmount.registry import needs_approval
from mcpmount.search import TOOL_SEARCH_NAME

__all__ = ["run_call", "run_search", "run_tools"]


# -- tools ------------------------------------------------------------------------------------


async def run_tools(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with listing(config, args.live, err) as registry:
        tools = registry.mounted_tools()
        policy = config.settings.approval
        gated = {t.name for t in tools if needs_approval(t, config.servers[t.server], policy)}
        if args.json:
            rows = [
                {"name": t.name, "server": t.server, "raw_name": t.raw_name, "deferred": t.deferred}
                | {"approval": t.name in gated, "description": t.definition.description}
                | {"input_schema": t.definition.input_schema}
                for t in tools
            ]
            print_json(out, json.dumps(rows))
            return EXIT_OK
        raws = [t.raw_name for t in tools if t.renamed]
        table = Table(title=Text(counted(len(tools), "tool")))
        table.add_column("name", no_wrap=True, min_width=widest(t.name for t in tools))
        table.add_column("raw name", no_wrap=True, min_width=widest(raws))
        table.add_column("deferred", no_wrap=True, min_width=8)
        if gated:  # calls that wait for an approver
            table.add_column("approval", no_wrap=True, min_width=8)
        table.add_column(
            "description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60
        )
        for tool in tools:
            approval = ["needed" if tool.name in gated else ""] if gated else []
            table.add_row(
                shown(tool.name),
                shown(tool.raw_name if tool.renamed else ""),
                "deferred" if tool.deferred else "",
                *approval,
                shown(_first_line(tool.definition.description)),
            )
        out.print(table)
    return EXIT_OK


# -- search -----------------------------------------------------------------------------------


async def run_search(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with listing(config, args.live, err) as registry:
        await search_ready(registry, err)  # ranked as the library ranks, vectors and all
        found = registry.search(args.query, args.limit)
    if args.json:
        hits = [{"name": h.tool.name, "score": round(h.score, 4)} for h in found.hits]
        print_json(out, json.dumps({"hits": hits, "hint": found.hint}))
        return EXIT_OK
    table = Table(title=shown(f"search: {args.query}"))
    names = [hit.tool.name for hit in found.hits]
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("name", no_wrap=True, min_width=widest(names))
    table.add_column("score", justify="right", no_wrap=True, min_width=6)
    table.add_column("deferred", no_wrap=True, min_width=8)
    table.add_column("description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60)
    for rank, hit in enumerate(found.hits, 1):
        table.add_row(
            str(rank),
            shown(hit.tool.name),
            f"{hit.score:.3f}",
            "deferred" if hit.tool.deferred else "",
            shown(_first_line(hit.tool.definition.description)),
        )
    out.print(table)
    if found.hint:
        out.print(shown(found.hint, "yellow"))
    return EXIT_OK


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


# -- call -------------------------------------------------------------------------------------


async def run_call(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    example = f"""mcpmount call {args.name} '{{"path": "a.txt"}}' (its arguments: mcpmount """
    example += f"describe {args.name})"
    arguments = json_object(args.arguments, example=example)
    needed = needed_for(config, namespace_of(args.name))
    async with mounted(needed, err) as registry:
        if args.name == TOOL_SEARCH_NAME:
            await search_ready(registry, err)
        with progress_bar(err, args.name) as progress:
            result = await registry.call(
                args.name, arguments, timeout=args.timeout, progress=progress
            )
    if args.json:
        print_json(out, result.model_dump_json(by_alias=True, exclude_none=True))
    else:
        _print_result(result, out)
    if result.is_error:
        err.print(shown(f"{args.name} reported an error", "red"))
        return EXIT_FAILED
    return EXIT_OK


def _print_result(result: mcp_types.CallToolResult, out: Console) -> None:
    for block in result.content:
        match block:
            case mcp_types.TextContent():
                out.print(shown(block.text, lines=True))
            case mcp_types.ImageContent() | mcp_types.AudioContent():
                out.print(
                    shown(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 chars]")
                )
            case _:
                print_json(out, block.model_dump_json(by_alias=True, exclude_none=True))
    if result.structured_content is not None and not result.content:
        print_json(out, json.dumps(result.structured_content))


def _kind(value: object) -> str:
    """What a JSON value is, as an error says it."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    return "null" if value is None else "a number"


def json_object(text: str, *, example: str) -> dict[str, Any]:
    """``text`` (a command's JSON arguments) as an object.

    Raises:
        UsageError: It is not JSON, or not an object.
    """
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"arguments are not valid JSON: {exc}", hint=f"e.g. {example}") from None
    if not isinstance(value, dict):
        said = f"arguments must be a JSON object of named arguments, not {_kind(value)}"
        raise UsageError(said, hint=f"e.g. {example}")
    return cast(dict[str, Any], value)
