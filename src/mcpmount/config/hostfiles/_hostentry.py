"""One server entry of an MCP host file, in our keys.

Hosts spell some of our keys their own way (`RENAMED`, ``type`` for ``transport``, an
``oauth`` object's camelCase), add keys of their own, and give a stdio server an
``envFile``. Claude Code's ``headersHelper`` is a shell command string whose output is a
JSON object of headers; it becomes ``headers_command = ["/bin/sh", "-c", <the string>]``,
since the host defines it as a command for the shell, not as a program and its arguments.

``disabled: true`` skips the entry, with a note (`Tables.notes`). ``autoApprove`` (Cline's
and Claude Desktop's extensions' name) and ``alwaysAllow`` (Roo Code's) are the tools the
host runs without asking: our ``auto_approve``, which exempts them from every approval gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from mcpmount.config._settings import RegistrySettings
from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._dotenv import read_env_file
from mcpmount.config.hostfiles._entrykeys import Place, not_mounted
from mcpmount.configfile import HostVariables, Loc, Table, expand, format_loc, line, unknown_key

__all__ = ["host_entry", "not_mounted", "windsurf_entry"]

_IGNORED = frozenset({"timeout", "description", "dev", "gallery", "version"})
"""Keys hosts add to a server entry that mean nothing here (VS Code's ``dev`` watches a
server's sources; ``gallery`` and ``version`` say where it was installed from)."""

_HOST_KEYS = (
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "url",
    "headers",
    "headersHelper",
    "oauth",
    "type",
    "enabledTools",
    "disabledTools",
    "disabled",
    "autoApprove",
    "alwaysAllow",
)

RENAMED: Mapping[str, str] = {
    "enabledTools": "tools",
    "disabledTools": "exclude_tools",
    "headersHelper": "headers_command",
}
"""Host keys that mean what one of ours means, under another name."""

_OAUTH_KEYS = {
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "callbackPort": "callback_port",
}
"""An ``oauth`` object's keys as hosts spell them, and as we do."""

_HOST_TYPES: Mapping[str, Literal["stdio", "http", "sse"]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
"""Each ``type`` hosts write, as our ``transport``."""

_APPROVED = ("autoApprove", "alwaysAllow")


def host_entry(entry: Table, at: Place) -> Table | None:
    """Return a host file's server entry in our keys, or None if it is disabled or broken.

    Args:
        entry: The entry as the file has it.
        at: Where it is, and the file's tables (whose ``base`` is the file's folder),
            variables (for ``envFile``) and settings (to tell whether ``autoApprove``
            changes anything).
    """
    loc, tables, host, settings = at.loc, at.tables, at.host, at.settings
    problems = tables.problems
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        problems.append(line((*loc, "disabled"), "must be true or false"))
    elif disabled:
        return not_mounted(tables, loc, 'the file disables it ("disabled": true)')
    data: Table = {}
    for key, value in entry.items():
        if key in _HOST_KEYS:
            data[RENAMED.get(key, key)] = value
        elif key not in _IGNORED:
            problems.append(line((*loc, key), unknown_key(key, _HOST_KEYS)))
    data.pop("disabled", None)
    if "type" in data:
        kind = data.pop("type")
        if not isinstance(kind, str) or kind not in _HOST_TYPES:
            expected = ", ".join(map(repr, _HOST_TYPES))
            problems.append(line((*loc, "type"), f"must be one of {expected}"))
            return None
        data["transport"] = _HOST_TYPES[kind]
    if "headers_command" in data:
        helper = data["headers_command"]
        if not isinstance(helper, str):
            problems.append(line((*loc, "headersHelper"), "must be a string (a shell command)"))
            return None
        data["headers_command"] = ["/bin/sh", "-c", helper]
    if isinstance(oauth := data.get("oauth"), dict):
        table = cast("Table", oauth)
        data["oauth"] = {_OAUTH_KEYS.get(key, key): value for key, value in table.items()}
    if "envFile" in data and not _env_file(data, loc, tables, host):
        return None
    if any(key in data for key in _APPROVED) and not _auto_approve(data, loc, tables, settings):
        return None
    return data


def windsurf_entry(entry: Table, at: Place) -> Table | None:
    """Return a Windsurf entry in our keys: its remote server's URL is ``serverUrl`` (or
    ``url``), reached by streamable HTTP or SSE, whichever the server speaks (``auto``)."""
    if "serverUrl" in entry:
        if "url" in entry:
            problem = 'give "serverUrl" or "url", not both'
            at.tables.problems.append(line((*at.loc, "serverUrl"), problem))
            return None
        entry = {("url" if key == "serverUrl" else key): value for key, value in entry.items()}
    data = host_entry(entry, at)
    if data is not None and "url" in data and "transport" not in data:
        data["transport"] = "auto"
    return data


def _env_file(data: Table, loc: Loc, tables: Tables, host: HostVariables) -> bool:
    """Put the variables of ``envFile`` under ``env`` (which wins); False after a problem."""
    where = (*loc, "envFile")
    value = data.pop("envFile")
    if "url" in data:
        tables.problems.append(line(where, "only stdio servers (command) take it"))
        return False
    if not isinstance(value, str) or not value:
        tables.problems.append(line(where, "must be a string (the path of a dotenv file)"))
        return False
    before = len(tables.problems)
    path = expand(value, format_loc(where), tables.environ, tables.problems, None, host)
    if len(tables.problems) > before:
        return False
    found = read_env_file(tables.base / path, format_loc(where), tables.problems)
    if len(tables.problems) > before:
        return False
    env = data.get("env", {})
    if not isinstance(env, dict):
        return True  # validation names it
    # The file's values are literal: escape what expansion would take for a reference.
    literal = {name: value.replace("$", "$$") for name, value in found.items()}
    data["env"] = literal | cast("Table", env)
    return True


def _auto_approve(data: Table, loc: Loc, tables: Tables, settings: RegistrySettings | None) -> bool:
    """Put ``autoApprove`` and ``alwaysAllow`` under ``auto_approve``; False after a problem."""
    names: list[str] = []
    given = [key for key in _APPROVED if key in data]
    for key in given:
        value = data.pop(key)
        if not isinstance(value, list) or not all(
            isinstance(item, str) for item in cast("list[object]", value)
        ):
            tables.problems.append(line((*loc, key), "must be a list of tool names"))
            return False
        names += cast("list[str]", value)
    data["auto_approve"] = list(dict.fromkeys(names))
    if names and settings is not None and settings.approval == "configured":
        said = " and ".join(given) + (" change" if len(given) > 1 else " changes")
        tables.notes.append(
            f"{format_loc(loc)}: {said} nothing: no approval gate is configured "
            "(MCPMOUNT_APPROVAL=destructive or all would gate calls; these tools would skip it)"
        )
    return True
