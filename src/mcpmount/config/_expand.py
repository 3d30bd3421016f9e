"""``${VAR}`` and ``${VAR:-default}`` in the values of a server table.

Only ``args``, ``env``, ``cwd``, ``url``, ``headers``, ``headers_command`` and ``oauth``
values are expanded; ``$$`` is a literal ``$``. There is no shell: no ``$NAME``, ``~`` or
globs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import cast

from mcpmount.config._problems import Loc, format_loc

logger = logging.getLogger(__name__)

_REFERENCE = re.compile(
    r"\$(?:(?P<dollar>\$)|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}|(?P<bad>\{))"
)

_EXPANDED_TEXT = ("cwd", "url")
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


def _is_plain(name: str) -> bool:
    """Whether the variable is one known to hold no secret."""
    return name in _PLAIN_NAMES or name.startswith("XDG_")


def expand(
    value: str,
    where: str,
    environ: Mapping[str, str],
    problems: list[str],
    secrets: list[str] | None = None,
) -> str:
    """Return ``value`` with its references expanded; a lone ``$`` stays as it is.

    Values taken from ``environ`` (not defaults, which are in the file) are added to
    ``secrets``, unless the variable is one known to hold none (``HOME``, ``USER``, ...).
    """

    def replace(match: re.Match[str]) -> str:
        if match["dollar"]:
            return "$"
        if match["bad"]:
            problems.append(
                f"{where}: malformed variable reference: write ${{NAME}} or ${{NAME:-default}}, "
                "and $$ for a literal $"
            )
            return ""
        name, default = match["name"], match["default"]
        found = environ.get(name)
        if default is not None and not found:  # like the shell: unset or empty
            return default
        if found is None:
            problems.append(
                f"{where}: environment variable {name} is not set "
                f"(use ${{{name}:-default}} to give a default)"
            )
            return ""
        if secrets is not None and found and not _is_plain(name):
            secrets.append(found)
        return found

    return _REFERENCE.sub(replace, value)


def _warn_secret_arg(arg: object, where: str) -> None:
    """Warn when an argument expands a variable that looks like a secret.

    Arguments are world-readable in ``/proc/<pid>/cmdline``; ``env`` is not.
    """
    if not isinstance(arg, str):
        return
    for match in _REFERENCE.finditer(arg):
        name = match["name"]
        if name and _SECRET_NAME.search(name) and not _is_plain(name):
            logger.warning(
                "%s: passes ${%s} on the command line, where every local user can read it "
                "(/proc/<pid>/cmdline); pass it in env instead",
                where,
                match["name"],
            )


def expand_server(
    data: dict[str, object],
    loc: Loc,
    environ: Mapping[str, str],
    problems: list[str],
    secrets: list[str],
) -> set[Loc]:
    """Expand the references in a server table in place; return the keys that failed.

    Every value taken from the environment that may be a secret is added to ``secrets``.
    A value of the wrong type is left for validation to report.
    """
    failed: set[Loc] = set()

    def expand_one(value: object, key: Loc) -> object:
        if not isinstance(value, str):
            return value
        before = len(problems)
        expanded = expand(value, format_loc((*loc, *key)), environ, problems, secrets)
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
