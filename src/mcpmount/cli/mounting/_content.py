"""What servers offer besides tools: ``prompts``, ``resources``, ``read`` and ``prompt``.

Resources are shown under their registry URIs (``mcpmount://<namespace>/<uri>``), which
``read`` takes back. Server text is printed through `shown` and `print_json`: never as
markup, and with its control characters visible.
"""

from __future__ import annotations

import argparse
import json

import mcp_types
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK, UsageError
from mcpmount.cli._shown import counted, print_json, shown, widest
from mcpmount.cli.mounting._opening import listing, mounted, namespace_of, needed_for, server_of_uri
from mcpmount.cli.mounting._query import json_object
from mcpmount.config import RegistryConfig

__all__ = ["run_prompt", "run_prompts", "run_read", "run_resources"]


def _wire(items: list[BaseModel]) -> list[object]:
    return [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


async def run_prompts(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with listing(config, args.live, err) as registry:
        prompts = registry.prompts()
    if args.json:
        print_json(out, json.dumps(_wire(list(prompts))))
        return EXIT_OK
    table = Table(title=Text(counted(len(prompts), "prompt")))
    table.add_column("name", no_wrap=True, min_width=widest(p.name for p in prompts))
    table.add_column("arguments (* required)", no_wrap=True)
    table.add_column("description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60)
    for prompt in prompts:
        arguments = ", ".join(a.name + ("*" if a.required else "") for a in prompt.arguments or [])
        table.add_row(shown(prompt.name), shown(arguments), shown(_first_line(prompt.description)))
    out.print(table)
    return EXIT_OK


async def run_resources(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with listing(config, args.live, err) as registry:
        resources = registry.resources()
        templates = registry.resource_templates()
    if args.json:
        body = {"resources": _wire(list(resources)), "templates": _wire(list(templates))}
        print_json(out, json.dumps(body))
        return EXIT_OK
    rows = [(r.uri, r.name, r.mime_type, r.description) for r in resources]
    rows += [(t.uri_template, t.name, t.mime_type, t.description) for t in templates]
    title = f"{counted(len(resources), 'resource')}, {counted(len(templates), 'template')}"
    table = Table(title=Text(title))
    table.add_column("URI (template)", no_wrap=True, min_width=widest(r[0] for r in rows))
    table.add_column("name", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("description", overflow="ellipsis", no_wrap=True, min_width=20, max_width=60)
    for uri, name, mime, description in rows:
        table.add_row(shown(uri), shown(name), shown(mime or ""), shown(_first_line(description)))
    out.print(table)
    return EXIT_OK


async def run_read(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    async with mounted(needed_for(config, server_of_uri(args.uri)), err) as registry:
        result = await registry.read_resource(args.uri, timeout=args.timeout)
    if args.json:
        print_json(out, result.model_dump_json(by_alias=True, exclude_none=True))
        return EXIT_OK
    for item in result.contents:
        match item:
            case mcp_types.TextResourceContents():
                out.print(shown(item.text, lines=True))
            case mcp_types.BlobResourceContents():
                mime = item.mime_type or "unknown type"
                out.print(shown(f"[blob: {mime}, {len(item.blob)} base64 chars, {item.uri}]"))
    return EXIT_OK


async def run_prompt(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    arguments = json_object(args.arguments, example='\'{"name": "Ada"}\'')
    strings = {key: value for key, value in arguments.items() if isinstance(value, str)}
    if len(strings) < len(arguments):
        raise UsageError("prompt arguments are strings", hint='e.g. \'{"name": "Ada"}\'')
    async with mounted(needed_for(config, namespace_of(args.name)), err) as registry:
        result = await registry.get_prompt(args.name, strings, timeout=args.timeout)
    if args.json:
        print_json(out, result.model_dump_json(by_alias=True, exclude_none=True))
        return EXIT_OK
    for message in result.messages:
        block = message.content
        if isinstance(block, mcp_types.TextContent):
            out.print(shown(f"{message.role}: {block.text}", lines=True))
        else:
            out.print(Text(f"{message.role}:"))
            print_json(out, block.model_dump_json(by_alias=True, exclude_none=True))
    return EXIT_OK
