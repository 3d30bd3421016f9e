"""The hosts that keep their servers in YAML: goose's ``extensions`` and Continue's
``mcpServers``, in our keys.

goose (block.github.io/goose/docs/guides/config-files, "Extensions"): each extension
has a ``type``: ``stdio`` runs ``cmd`` with ``args`` and ``envs``; ``sse`` reaches
``uri`` by legacy SSE; ``streamable_http`` reaches ``uri`` (with ``headers``) by
streamable HTTP. ``builtin``, ``platform``, ``frontend`` and ``inline_python`` are goose's
own code, which only goose runs: not mounted, said in a note, as is ``enabled: false``.
``env_keys`` names variables whose values goose keeps in its keyring: here they come from
the environment (``${NAME}``), and a note says so. ``timeout`` (seconds, per request) is
our ``call_timeout``; ``available_tools``, when not empty, our ``tools``.

Continue (docs.continue.dev/reference, "mcpServers"; the ``.continue/mcpServers/``
blocks of docs.continue.dev/customize/deep-dives/mcp): a list of servers, each naming
itself (``name``) with ``command``, ``args``, ``env`` and ``cwd``, or a ``url`` whose
``type`` is ``sse`` or ``streamable-http``, with ``requestOptions.headers``.
``connectionTimeout`` (milliseconds) is our ``startup_timeout``. Its
``${{ secrets.NAME }}`` and ``${{ inputs.NAME }}`` are read from the environment
(``${NAME}``), and a note says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import cast

from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._entrykeys import Place, names, not_mounted, seconds, switched_off
from mcpmount.configfile import Loc, Table, format_loc, line, unknown_key

__all__ = ["CONTINUE_SPELT", "GOOSE_SPELT", "continue_entry", "goose_entry"]

_GOOSE_KEYS = (
    "type",
    "cmd",
    "args",
    "envs",
    "env_keys",
    "uri",
    "headers",
    "timeout",
    "enabled",
    "available_tools",
    "name",
    "display_name",
    "description",
    "bundled",
)
_GOOSE_RUNS_ITSELF = ("builtin", "platform", "frontend", "inline_python")
_GOOSE_TYPES = {"stdio": "stdio", "sse": "sse", "streamable_http": "http"}

GOOSE_SPELT: Mapping[str, str] = {
    "command": "cmd",
    "env": "envs",
    "url": "uri",
    "transport": "type",
    "call_timeout": "timeout",
    "tools": "available_tools",
}
"""Our keys as goose spells them, to name them in problems."""

_CONTINUE_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "type",
    "requestOptions",
    "connectionTimeout",
)
_CONTINUE_TYPES = {"stdio": "stdio", "sse": "sse", "streamable-http": "http"}

CONTINUE_SPELT: Mapping[str, str] = {"transport": "type", "startup_timeout": "connectionTimeout"}
"""Our keys as Continue spells them, to name them in problems."""

_TEMPLATE = re.compile(r"\$\{\{\s*(?:secrets|inputs)\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""Continue's ``${{ secrets.NAME }}`` (or ``inputs.NAME``)."""


def goose_entry(entry: Table, at: Place) -> Table | None:
    """Return a goose extension in our keys, or None if it is not mounted or broken (see
    the module docstring)."""
    loc, tables = at.loc, at.tables
    before = len(tables.problems)
    kind = entry.get("type")
    if switched_off(entry, at, "enabled: false"):
        return None
    if kind in _GOOSE_RUNS_ITSELF:
        return not_mounted(tables, loc, f"a {kind} extension is goose's own, which only goose runs")
    if not isinstance(kind, str) or kind not in _GOOSE_TYPES:
        every = ", ".join(map(repr, [*_GOOSE_TYPES, *_GOOSE_RUNS_ITSELF]))
        tables.problems.append(line((*loc, "type"), f"must be one of {every}"))
        return None
    data: Table = {"transport": _GOOSE_TYPES[kind]}
    for key, value in entry.items():
        if key not in _GOOSE_KEYS:
            tables.problems.append(line((*loc, key), unknown_key(key, _GOOSE_KEYS)))
        elif key in ("cmd", "args", "envs", "uri", "headers"):
            data[{"cmd": "command", "envs": "env", "uri": "url"}.get(key, key)] = value
    if "env_keys" in entry and (keys := names(entry["env_keys"], (*loc, "env_keys"), tables)):
        env = data.get("env", {})
        if isinstance(env, dict):
            data["env"] = {key: f"${{{key}}}" for key in keys} | cast("Table", env)
        tables.notes.append(
            f"{format_loc(loc)}: env_keys {', '.join(keys)} are read from the environment "
            "(goose keeps them in its keyring): set them where mcpmount runs"
        )
    if "timeout" in entry:
        data["call_timeout"] = seconds(entry["timeout"], (*loc, "timeout"), tables)
    if tools := names(entry.get("available_tools", []), (*loc, "available_tools"), tables):
        data["tools"] = tools
    return data if len(tables.problems) == before else None


def continue_entry(entry: Table, at: Place) -> Table | None:
    """Return a Continue ``mcpServers`` item (without its ``name``) in our keys, or None
    if it is broken (see the module docstring)."""
    loc, tables = at.loc, at.tables
    before = len(tables.problems)
    entry = cast("Table", _templates(entry, loc, tables))
    data: Table = {}
    for key, value in entry.items():
        if key not in _CONTINUE_KEYS:
            tables.problems.append(line((*loc, key), unknown_key(key, _CONTINUE_KEYS)))
        elif key in ("command", "args", "env", "cwd", "url"):
            data[key] = value
    if "type" in entry:
        kind = entry["type"]
        if not isinstance(kind, str) or kind not in _CONTINUE_TYPES:
            every = ", ".join(map(repr, _CONTINUE_TYPES))
            tables.problems.append(line((*loc, "type"), f"must be one of {every}"))
        else:
            data["transport"] = _CONTINUE_TYPES[kind]
    if "connectionTimeout" in entry:
        where = (*loc, "connectionTimeout")
        data["startup_timeout"] = seconds(entry["connectionTimeout"], where, tables, per=1000)
    if "requestOptions" in entry:
        options = tables.table(entry["requestOptions"], (*loc, "requestOptions")) or {}
        if "headers" in options:
            data["headers"] = options["headers"]
        if unused := [key for key in options if key != "headers"]:
            tables.notes.append(
                f"{format_loc((*loc, 'requestOptions'))}: {', '.join(unused)} not used: "
                "mcpmount takes only the headers of requestOptions"
            )
    return data if len(tables.problems) == before else None


def _templates(node: object, loc: Loc, tables: Tables) -> object:
    """Return ``node`` with Continue's ``${{ secrets.NAME }}`` written ``${NAME}``, and a
    note naming those variables."""
    found: list[str] = []

    def walk(node: object) -> object:
        if isinstance(node, str):
            found.extend(match[1] for match in _TEMPLATE.finditer(node))
            return _TEMPLATE.sub(r"${\1}", node)
        if isinstance(node, dict):
            return {key: walk(item) for key, item in cast("Table", node).items()}
        if isinstance(node, list):
            return [walk(item) for item in cast("list[object]", node)]
        return node

    out = walk(node)
    if found:
        tables.notes.append(
            f"{format_loc(loc)}: the secrets {', '.join(dict.fromkeys(found))} are read "
            "from the environment: set them where mcpmount runs"
        )
    return out
