"""What the readers of the hosts' formats share: where an entry is read (`Place`),
checking a value's type, and turning a host's timeout or list of names into ours."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import cast

from mcpmount.config._settings import RegistrySettings
from mcpmount.config._tables import Tables
from mcpmount.configfile import HostVariables, Loc, Table, format_loc, line

__all__ = ["Place", "names", "not_mounted", "seconds", "strings", "switched_off"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Place:
    """Where one entry of a host file is read, and what reading it needs."""

    loc: Loc
    """Where the entry is in the file."""

    tables: Tables
    """Where its problems and notes go; its ``base`` is the file's folder."""

    host: HostVariables
    """The file's variables (``${workspaceFolder}``, ``${input:id}``, ...)."""

    settings: RegistrySettings | None
    """The registry's settings, to tell whether an auto-approval changes anything."""


def seconds(value: object, loc: Loc, tables: Tables, *, per: float = 1.0) -> float | None:
    """Return ``value`` (a positive number of ``1/per`` seconds) in seconds; None after
    adding the problem."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        unit = "seconds" if per == 1 else "milliseconds"
        tables.problems.append(line(loc, f"must be a positive number ({unit})"))
        return None
    return value / per


def names(value: object, loc: Loc, tables: Tables) -> list[str] | None:
    """Return ``value`` if it is a list of strings (tool or variable names); None after
    adding the problem."""
    if isinstance(value, list) and all(isinstance(i, str) for i in cast("list[object]", value)):
        return cast("list[str]", value)
    tables.problems.append(line(loc, "must be a list of names"))
    return None


def strings(value: object, loc: Loc, tables: Tables) -> dict[str, str] | None:
    """Return ``value`` if it is a table of strings; None after adding the problem."""
    if isinstance(value, dict) and all(
        isinstance(item, str) for item in cast("dict[str, object]", value).values()
    ):
        return cast("dict[str, str]", value)
    tables.problems.append(line(loc, f"must be {tables.word} of strings"))
    return None


def not_mounted(tables: Tables, loc: Loc, why: str) -> None:
    """Say that the entry at ``loc`` is not mounted, and why (a note, and a log line)."""
    where = format_loc(loc)
    tables.notes.append(f"{where}: not mounted: {why}")
    logger.info("%s: not mounted: %s", where, why)


def switched_off(entry: Table, at: Place, spelt: str) -> bool:
    """Whether the entry's ``enabled`` is false (said in a note, as the file spells it:
    ``spelt``) or no boolean (a problem): then it is not mounted."""
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        at.tables.problems.append(line((*at.loc, "enabled"), "must be true or false"))
        return True
    if not enabled:
        not_mounted(at.tables, at.loc, f"the file disables it ({spelt})")
    return not enabled
