"""Zed's ``context_servers`` (in its ``settings.json``), in our keys.

As zed.dev/docs/ai/mcp ("As Custom Servers") defines them, an entry is one of:

- a server Zed starts: ``command`` (the program), ``args`` and ``env``; older settings
  nest them as ``"command": {"path": ..., "args": [...], "env": {...}}``;
- a remote server: ``url`` (streamable HTTP) and ``headers``;
- a server an extension provides (``"source": "extension"``, or only ``settings``): Zed
  runs the extension's own code to start it, which mcpmount cannot, so it is not mounted
  and a note says so.

``"source": "custom"`` marks the first two; ``settings`` is for extensions only, and
``"enabled": false`` leaves a server out (said in a note).
"""

from __future__ import annotations

from typing import cast

from mcpmount.config.hostfiles._entrykeys import Place, not_mounted, switched_off
from mcpmount.configfile import Table, line, unknown_key

__all__ = ["zed_entry"]

_KEYS = ("command", "args", "env", "url", "headers", "source", "settings", "enabled")
_COMMAND_KEYS = ("path", "args", "env")


def zed_entry(entry: Table, at: Place) -> Table | None:
    """Return a ``context_servers`` entry in our keys, or None if it is not mounted or
    broken (see the module docstring)."""
    loc, tables = at.loc, at.tables
    before = len(tables.problems)
    if switched_off(entry, at, '"enabled": false'):
        return None
    source = entry.get("source", "custom")
    if source == "extension" or not ({"command", "url"} & set(entry)):
        return not_mounted(
            tables, loc, "a Zed extension provides it, and only Zed can run an extension"
        )
    if source != "custom":
        tables.problems.append(line((*loc, "source"), "must be 'custom' or 'extension'"))
    data: Table = {}
    for key, value in entry.items():
        if key not in _KEYS:
            tables.problems.append(line((*loc, key), unknown_key(key, _KEYS)))
        elif key not in ("source", "settings", "enabled"):
            data[key] = value
    command = data.get("command")
    if isinstance(command, dict):  # the older form: the program, its args and env nested
        nested = cast("Table", command)
        for key in nested:
            if key not in _COMMAND_KEYS:
                problem = unknown_key(key, _COMMAND_KEYS)
                tables.problems.append(line((*loc, "command", key), problem))
        data["command"] = nested.get("path")
        data |= {key: nested[key] for key in ("args", "env") if key in nested}
    return data if len(tables.problems) == before else None
