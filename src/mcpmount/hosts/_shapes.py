"""The ``mcpmount serve`` entry in each host's own shape: `shape_entry`, `environment`.

Each host spells a stdio server its own way, as its documentation gives it:

- Claude Desktop, Cursor, Windsurf, Gemini CLI, LM Studio: ``command``, ``args``, ``env``;
  VS Code and Claude Code add ``"type": "stdio"`` (VS Code requires it).
- Zed: ``"source": "custom"`` beside ``command``, ``args``, ``env`` in ``context_servers``.
- OpenAI Codex: a ``[mcp_servers.NAME]`` table of ``command``, ``args``, ``env``, and
  ``env_vars``: the names of Codex's own variables the server also gets.
- goose: an ``extensions`` item with ``name``, ``type: stdio``, ``cmd``, ``args``,
  ``envs``, ``env_keys`` (variables goose takes from its keyring or environment),
  ``enabled`` and ``timeout``.
- Continue: an item of the ``mcpServers`` list, naming itself (``name``).

The variables the config needs are passed in the host's own syntax where it has one:
``${VAR}`` for Claude Code and Gemini CLI, ``${env:VAR}`` for Cursor, VS Code and
Windsurf, by name in Codex's ``env_vars`` and goose's ``env_keys``. The others expand
nothing, so their user is told which variables to set; values are copied into the file
only on request (``copy_env``), never silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from mcpmount.hosts._places import HostApp

__all__ = ["NOT_STDIO", "environment", "shape_entry"]

NOT_STDIO = frozenset(
    {
        "url",
        "serverUrl",
        "httpUrl",
        "uri",
        "headers",
        "headersHelper",
        "oauth",
        "http_headers",
        "env_http_headers",
        "bearer_token_env_var",
        "requestOptions",
    }
)
"""Keys of an entry that make it a url server: dropped when an entry becomes ours."""

_TYPED = (HostApp.CLAUDE_CODE, HostApp.VSCODE)
"""Hosts whose entries say their ``type``: VS Code requires it, Claude Code writes it."""

_DOLLAR = (HostApp.CLAUDE_CODE, HostApp.GEMINI)
_ENV_COLON = (HostApp.CURSOR, HostApp.VSCODE, HostApp.WINDSURF)
_BY_NAME = {HostApp.CODEX: "env_vars", HostApp.GOOSE: "env_keys"}
"""Hosts that pass a variable of their own environment by its name, and the key."""

GOOSE_TIMEOUT = 300
"""goose's own default ``timeout`` (seconds per request) for an extension."""


def env_key(host: HostApp) -> str:
    """The key of an entry's environment: goose's ``envs``, every other host's ``env``."""
    return "envs" if host is HostApp.GOOSE else "env"


def shape_entry(
    host: HostApp,
    name: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    passed: Sequence[str],
    existing: Mapping[str, object] | None,
) -> dict[str, object]:
    """Return the entry running ``argv`` with ``env``, in ``host``'s shape.

    An ``existing`` entry of the name keeps its other keys (not those of a url server)
    and the ``env`` values it has, but for ``PATH``, which is ours; ``passed`` are the
    variables given by name (Codex's ``env_vars``, goose's ``env_keys``).
    """
    command, args = argv[0], list(argv[1:])
    match host:
        case HostApp.GOOSE:
            entry: dict[str, object] = {
                "name": name,
                "type": "stdio",
                "cmd": command,
                "args": args,
                "enabled": True,
                "timeout": GOOSE_TIMEOUT,
            }
        case HostApp.ZED:
            entry = {"source": "custom", "command": command, "args": args}
        case HostApp.CONTINUE:
            entry = {"name": name, "command": command, "args": args}
        case _ if host in _TYPED:
            entry = {"type": "stdio", "command": command, "args": args}
        case _:
            entry = {"command": command, "args": args}
    merged = dict(env)
    if existing is not None:
        kept = {key: value for key, value in existing.items() if key not in NOT_STDIO}
        had = kept.get(env_key(host))
        if isinstance(had, dict):  # the user's own values stay; our PATH is rewritten
            merged |= cast("dict[str, str]", had)
            if "PATH" in env:
                merged["PATH"] = env["PATH"]
        entry = kept | entry
    if merged:
        entry[env_key(host)] = merged
    if host in _BY_NAME and passed:
        entry[_BY_NAME[host]] = list(dict.fromkeys(passed))
    return entry


def environment(
    host: HostApp,
    needed: Mapping[str, bool],
    environ: Mapping[str, str],
    copy_env: bool,
    name: str,
    path: Path,
) -> tuple[dict[str, str], list[str], list[str]]:
    """Return the entry's ``env`` for the variables the config needs, those passed by
    name, and what to say."""
    env: dict[str, str] = {}
    copied = [variable for variable in needed if copy_env and variable in environ]
    passed: list[str] = []
    left: list[str] = []
    for variable, optional in needed.items():
        if variable in copied:
            env[variable] = environ[variable]
        elif host in _DOLLAR:
            env[variable] = f"${{{variable}:-}}" if optional else f"${{{variable}}}"
            passed.append(variable)
        elif host in _ENV_COLON:
            env[variable] = f"${{env:{variable}}}"
            passed.append(variable)
        elif host in _BY_NAME:
            passed.append(variable)
        elif not optional:
            left.append(variable)
    notes: list[str] = []
    if passed:
        said = f"in {_BY_NAME[host]}" if host in _BY_NAME else f"as {env[passed[0]]}"
        notes.append(
            f"env: {', '.join(passed)} come from {host.label}'s own environment "
            f"({said}); start {host.label} with them set"
        )
    if copied:
        notes.append(
            f"env: this shell's values of {', '.join(copied)} are copied into {path} "
            "(--copy-env): anyone who can read the file can read them"
        )
    if left:
        notes.append(
            f"env: {host.label} expands no variables: set {', '.join(left)} under "
            f'"{env_key(host)}" of "{name}" in {path} yourself, or run again with '
            "--copy-env to copy this shell's values"
        )
    return env, [v for v in passed if host in _BY_NAME], notes
