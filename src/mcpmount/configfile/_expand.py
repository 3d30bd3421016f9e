"""``${VAR}`` and ``${VAR:-default}`` in the values of a server table.

Only ``command``, ``args``, ``env``, ``cwd``, ``url``, ``headers``, ``headers_command`` and
``oauth`` values are expanded; ``$$`` is a literal ``$``. There is no shell: no ``$NAME``,
``~`` or globs. A host file also has its host's variables (``${env:NAME}``,
``${workspaceFolder}``, ``${input:id}``, ...: `HostVariables`).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator, Mapping
from typing import cast

from mcpmount.configfile._problems import Loc, format_loc
from mcpmount.configfile._variables import (
    PREDEFINED,
    HostVariables,
    input_variable,
    outside_host_file,
)

logger = logging.getLogger(__name__)

_REFERENCE = re.compile(
    r"\$(?:(?P<dollar>\$)"
    r"|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*|/)(?::-(?P<default>[^}]*))?\}"
    r"|\{(?P<scheme>env|input|command|config):(?P<arg>[^}]*)\}"
    r"|(?P<bad>\{))"
)

_EXPANDED_TEXT = ("command", "cwd", "url")
_EXPANDED_LISTS = ("args", "headers_command")
_EXPANDED_TABLES = ("env", "headers", "oauth")

_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|API_?KEY|CREDENTIAL|AUTH|PRIVATE|(?:^|_)(?:PAT|KEY|PWD)(?:_|$)",
    re.IGNORECASE,
)
"""Names of variables that look like they hold a secret (``GH_PAT``, ``OPENAI_API_KEY``)."""

_PLAIN_NAMES = frozenset(
    {
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "PATH",
        "TMPDIR",
        "TMP",
        "TEMP",
        "LANG",
        "LC_ALL",
        "TERM",
        "HOSTNAME",
    }
)
"""Variables known to hold no secret. Every other expanded value is treated as a secret:
hidden wherever it may show (errors, stderr, logs), whichever key it was expanded in."""

PYTHON = "MCPMOUNT_PYTHON"
"""The Python mcpmount runs on (``sys.executable``) unless the environment sets it: what a
config writes to run a Python server with the interpreter that has ``mcp`` installed,
whether or not a venv is active, and whoever starts mcpmount (a host, with only its own
``PATH``)."""


def is_plain(name: str) -> bool:
    """Whether the variable is one known to hold no secret."""
    return name in _PLAIN_NAMES or name == PYTHON or name.startswith("XDG_")


def expand(
    value: str,
    where: str,
    environ: Mapping[str, str],
    problems: list[str],
    secrets: list[tuple[str, str]] | None = None,
    host: HostVariables | None = None,
) -> str:
    """Return ``value`` with its references expanded; a lone ``$`` stays as it is.

    Values taken from ``environ`` (and defaults) are added to ``secrets`` with the
    variable's name, unless the variable is one known to hold none
    (``HOME``, ``USER``, ...); so are the answers to ``${input:id}`` (named by the id).
    Which of them are secret is decided from both (`mcpmount.config` ``_secrecy``).
    ``host`` resolves a host file's own variables; without it they are problems that
    say how to write them here.
    """

    def secret(found: str, name: str) -> str:
        if secrets is not None and found:
            secrets.append((name, found))
        return found

    def replace(match: re.Match[str]) -> str:
        if match["dollar"]:
            return "$"
        if match["bad"]:
            problems.append(
                f"{where}: malformed variable reference: write ${{NAME}} or ${{NAME:-default}}, "
                "and $$ for a literal $"
            )
            return ""
        if match["scheme"]:
            if host is None:
                problems.append(f"{where}: {outside_host_file(match['scheme'], match['arg'])}")
                return ""
            found, is_secret = host.scheme(match["scheme"], match["arg"], where, environ, problems)
            plain = match["scheme"] == "env" and is_plain(match["arg"])
            return secret(found, match["arg"]) if is_secret and not plain else found
        name, default = match["name"], match["default"]
        if host is not None and default is None:
            if (predefined := host.predefined(name)) is not None:
                return predefined
            if name not in environ and (why := host.editor_only(name)) is not None:
                problems.append(f"{where}: {why}")
                return ""
        if name == "/":
            problems.append(f"{where}: ${{/}} is VS Code's path separator; write / here")
            return ""
        found = environ.get(name)
        if name == PYTHON and not found:
            found = sys.executable
        if default is not None and not found:  # like the shell: unset or empty
            return default if is_plain(name) else secret(default, name)
        if found is None:
            problems.append(
                f"{where}: environment variable {name} is not set "
                f"(use ${{{name}:-default}} to give a default)"
            )
            return ""
        return found if is_plain(name) else secret(found, name)

    return _REFERENCE.sub(replace, value)


def _warn_secret_arg(arg: object, where: str) -> None:
    """Warn when an argument expands a variable that looks like a secret.

    Arguments are world-readable in ``/proc/<pid>/cmdline``; ``env`` is not.
    """
    if not isinstance(arg, str):
        return
    for match in _REFERENCE.finditer(arg):
        name = match["arg"] if match["scheme"] == "env" else match["name"]
        if name and _SECRET_NAME.search(name) and not is_plain(name):
            logger.warning(
                "%s: passes %s on the command line, where every local user can read it "
                "(/proc/<pid>/cmdline); pass it in env instead",
                where,
                match[0],
            )


def expand_server(
    data: dict[str, object],
    loc: Loc,
    environ: Mapping[str, str],
    problems: list[str],
    secrets: list[tuple[str, str]],
    host: HostVariables | None = None,
) -> set[Loc]:
    """Expand the references in a server table in place; return the keys that failed.

    Every value taken from the environment that may be a secret is added to ``secrets``,
    with the variable's name.
    A value of the wrong type is left for validation to report. ``host`` resolves a host
    file's own variables (`expand`).
    """
    failed: set[Loc] = set()

    def expand_one(value: object, key: Loc) -> object:
        if not isinstance(value, str):
            return value
        before = len(problems)
        expanded = expand(value, format_loc((*loc, *key)), environ, problems, secrets, host)
        if len(problems) > before:
            failed.add(key)
        return expanded

    for key in _EXPANDED_TEXT:
        if key in data:
            data[key] = expand_one(data[key], (key,))
    for key in _EXPANDED_LISTS:
        if isinstance(args := data.get(key), list):
            items = cast("list[object]", args)
            for i, arg in enumerate(items):
                _warn_secret_arg(arg, format_loc((*loc, key, i)))
            data[key] = [expand_one(arg, (key, i)) for i, arg in enumerate(items)]
    for key in _EXPANDED_TABLES:
        if isinstance(table := data.get(key), dict):
            entries = cast("dict[str, object]", table)
            data[key] = {name: expand_one(value, (key, name)) for name, value in entries.items()}
    return failed


def references(value: str, *, host_file: bool) -> Iterator[tuple[str, bool]]:
    """Yield each environment variable ``value`` refers to, with whether it has a default.

    In a host file, ``${input:id}`` refers to ``MCPMOUNT_INPUT_<ID>``, and the hosts'
    predefined names (``${workspaceFolder}``, ...) to no variable at all.
    """
    for match in _REFERENCE.finditer(value):
        name = match["name"]
        if name and name != "/" and not (host_file and name in PREDEFINED):
            yield name, match["default"] is not None
        elif match["scheme"] == "env":
            yield match["arg"], False
        elif match["scheme"] == "input":
            yield input_variable(match["arg"]), False
