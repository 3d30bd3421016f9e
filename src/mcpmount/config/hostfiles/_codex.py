"""OpenAI Codex's ``config.toml``: its ``[mcp_servers.<name>]`` tables, in our keys.

As developers.openai.com/codex/mcp (and the repository's ``docs/config.md``, "MCP
integration") define them:

- ``command``, ``args``, ``env`` and ``cwd`` start a stdio server; ``url`` names a
  streamable HTTP one (Codex speaks no SSE).
- ``env_vars`` names variables of Codex's own environment the server also gets: each one
  set here is passed as ``${NAME}``; one that is not set is left out, as Codex does.
- ``bearer_token_env_var`` names the variable holding a bearer token: the
  ``Authorization: Bearer ${VAR}`` header. ``http_headers`` are headers as given,
  ``env_http_headers`` headers whose values are variables (sent only when set).
- ``startup_timeout_sec`` (or the older ``startup_timeout_ms``) is our
  ``startup_timeout``; ``tool_timeout_sec`` our ``call_timeout``.
- ``enabled = false`` leaves the server out (said in a note); ``required`` is ours.
- ``enabled_tools`` and ``disabled_tools`` are our ``tools`` and ``exclude_tools``.
- ``scopes`` are the OAuth scopes of a url server's login (our ``oauth.scopes``).
- ``default_tools_approval_mode`` and ``[mcp_servers.<name>.tools.<tool>]`` set Codex's
  own approval prompts: those are not carried over, and a note says so, since mcpmount's
  approval gate (``MCPMOUNT_APPROVAL``, ``approve``, ``auto_approve``) decides here.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles._entrykeys import Place, names, seconds, strings, switched_off
from mcpmount.configfile import Loc, Table, format_loc, line, unknown_key

__all__ = ["CODEX_SPELT", "codex_entry"]

_SAME = ("command", "args", "env", "cwd", "url", "required")
"""Codex's keys that are ours, as they are."""

_KEYS = (
    *_SAME,
    "env_vars",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "scopes",
    "default_tools_approval_mode",
    "tools",
)

CODEX_SPELT: Mapping[str, str] = {
    "tools": "enabled_tools",
    "exclude_tools": "disabled_tools",
    "startup_timeout": "startup_timeout_sec",
    "call_timeout": "tool_timeout_sec",
    "headers": "http_headers",
}
"""Our keys as Codex spells them, to name them in problems."""


def codex_entry(entry: Table, at: Place) -> Table | None:
    """Return a ``[mcp_servers.<name>]`` table in our keys, or None if it is disabled or
    broken (see the module docstring)."""
    loc, tables = at.loc, at.tables
    before = len(tables.problems)
    if switched_off(entry, at, "enabled = false"):
        return None
    data: Table = {key: value for key, value in entry.items() if key in _SAME}
    for key in entry:
        if key not in _KEYS:
            tables.problems.append(line((*loc, key), unknown_key(key, _KEYS)))
    _environment(entry, data, loc, tables)
    _headers(entry, data, loc, tables)
    timeouts = (
        ("startup_timeout_sec", "startup_timeout", 1.0),
        ("startup_timeout_ms", "startup_timeout", 1000.0),
        ("tool_timeout_sec", "call_timeout", 1.0),
    )
    for theirs, ours, per in timeouts:
        if theirs in entry:
            data[ours] = seconds(entry[theirs], (*loc, theirs), tables, per=per)
    for theirs, ours in (("enabled_tools", "tools"), ("disabled_tools", "exclude_tools")):
        if theirs in entry:
            data[ours] = names(entry[theirs], (*loc, theirs), tables)
    if "scopes" in entry:
        data["oauth"] = {"scopes": names(entry["scopes"], (*loc, "scopes"), tables)}
    approvals = [key for key in ("default_tools_approval_mode", "tools") if key in entry]
    if approvals:
        tables.notes.append(
            f"{format_loc(loc)}: {' and '.join(approvals)} (Codex's approval prompts) "
            "are not carried over: MCPMOUNT_APPROVAL, approve and auto_approve decide "
            "which calls wait for approval here"
        )
    return data if len(tables.problems) == before else None


def _environment(entry: Table, data: Table, loc: Loc, tables: Tables) -> None:
    """Add ``env_vars`` that are set to ``env``, as references (``env`` wins)."""
    if "env_vars" not in entry:
        return
    wanted = names(entry["env_vars"], (*loc, "env_vars"), tables) or []
    env = data.get("env", {})
    if isinstance(env, dict):
        passed = {name: f"${{{name}}}" for name in wanted if name in tables.environ}
        data["env"] = passed | env


def _headers(entry: Table, data: Table, loc: Loc, tables: Tables) -> None:
    """Put the bearer token and the headers, plain and from variables, under ``headers``."""
    headers: dict[str, str] = {}
    if "http_headers" in entry:
        headers |= strings(entry["http_headers"], (*loc, "http_headers"), tables) or {}
    if "env_http_headers" in entry:
        given = strings(entry["env_http_headers"], (*loc, "env_http_headers"), tables) or {}
        headers |= {name: f"${{{var}}}" for name, var in given.items() if tables.environ.get(var)}
    if "bearer_token_env_var" in entry:
        var = entry["bearer_token_env_var"]
        if not isinstance(var, str) or not var:
            problem = "must be the name of a variable"
            tables.problems.append(line((*loc, "bearer_token_env_var"), problem))
        else:
            headers["Authorization"] = f"Bearer ${{{var}}}"
    if headers:
        data["headers"] = headers
