"""``mcpmount describe NAME``: one tool, its description and a table of its arguments.

The arguments are read from the tool's input schema (its ``properties`` and
``required``): each one's name, type, whether it is required, and its description. A
schema is a server's text like any other, printed through `shown`. Only the tool's server
is mounted, from its cached lists when they are fresh (as ``tools`` does).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any, cast

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from mcpmount.cli._exit import EXIT_OK
from mcpmount.cli._shown import print_json, shown
from mcpmount.cli.mounting._opening import listing, namespace_of, needed_for
from mcpmount.config import RegistryConfig

__all__ = ["arguments_of", "run_describe"]


def _type_of(schema: Mapping[str, Any]) -> str:
    """A property's type as a reader wants it: ``string``, ``integer | null``,
    ``array of string``, ``one of: "a", "b"``, ``object``; ``any`` when unsaid."""
    if "enum" in schema and isinstance(schema["enum"], list):
        values = cast(list[object], schema["enum"])
        return "one of: " + ", ".join(json.dumps(value) for value in values)
    if "const" in schema:
        return f"= {json.dumps(schema['const'])}"
    kind: object = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in cast(list[object], kind))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type_of(cast(dict[str, Any], schema['items']))}"
    if isinstance(kind, str):
        return kind
    for either in ("anyOf", "oneOf"):
        options = schema.get(either)
        if isinstance(options, list):
            kinds = [
                _type_of(cast(dict[str, Any], option))
                for option in cast(list[object], options)
                if isinstance(option, dict)
            ]
            return " | ".join(kinds)
    return "any"


def arguments_of(schema: Mapping[str, Any]) -> list[tuple[str, str, bool, str]]:
    """The arguments of a tool's input schema: (name, type, required, description) each,
    in the schema's order."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = schema.get("required")
    needed = set(cast(list[object], required)) if isinstance(required, list) else set[object]()
    rows: list[tuple[str, str, bool, str]] = []
    for name, value in cast(dict[str, object], properties).items():
        prop = cast(dict[str, Any], value) if isinstance(value, dict) else {}
        description = prop.get("description")
        text = description if isinstance(description, str) else ""
        rows.append((name, _type_of(prop), name in needed, text))
    return rows


async def run_describe(
    config: RegistryConfig, args: argparse.Namespace, out: Console, err: Console
) -> int:
    needed = needed_for(config, namespace_of(args.name))
    async with listing(needed, args.live, err) as registry:
        tool = registry.get(args.name)  # UnknownToolError names the tools it might be
    definition = tool.definition
    if args.json:
        print_json(out, definition.model_dump_json(by_alias=True, exclude_none=True))
        return EXIT_OK
    heading = Text.assemble(shown(tool.name, "bold"), f" (server {tool.server!r}")
    if tool.renamed:
        heading.append_text(shown(f", raw name {tool.raw_name}"))
    heading.append(")")
    if definition.title:
        heading.append_text(Text(": ")).append_text(shown(definition.title))
    parts: list[Text | Table] = [heading]
    if definition.description:
        parts.append(shown(definition.description.strip(), lines=True))
    rows = arguments_of(definition.input_schema)
    if rows:
        table = Table(title=Text("arguments"), title_justify="left")
        table.add_column("name", no_wrap=True)
        table.add_column("type", overflow="fold")
        table.add_column("required", no_wrap=True)
        table.add_column("description", overflow="fold")
        for name, kind, required, description in rows:
            table.add_row(
                shown(name), shown(kind), "yes" if required else "", shown(description, lines=True)
            )
        parts.append(table)
    else:
        parts.append(Text("no arguments", style="dim"))
    out.print(Group(*parts))
    return EXIT_OK
