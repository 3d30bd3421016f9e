"""The tables of one config file turned into data: settings, and a spec per server table."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import cast

from pydantic import ValidationError

from mcpmount.config._server import PIN_AND_VISIBLE, PIN_RENAMED
from mcpmount.config._settings import RegistrySettings, build_settings
from mcpmount.config._spec import IMPLIED_BY, KINDS, SPEC, ServerSpec, kind_of
from mcpmount.configfile import (
    HostVariables,
    Loc,
    Table,
    expand_server,
    line,
    problem_lines,
    unknown_key,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tables:
    """Reads the tables of one config file, adding every problem it finds to ``problems``."""

    base: Path
    """The file's directory: a relative ``cwd`` is resolved against it."""

    environ: Mapping[str, str]
    """The variables to expand and read ``MCPMOUNT_*`` settings from."""

    problems: list[str]
    """One line per problem, in file order."""

    word: str
    """What a mapping is called in the file: "a table" in TOML, "an object" in JSON."""

    notes: list[str] = field(default_factory=list[str])
    """One line per thing worth saying that is no problem (a server the file disables)."""

    def table(self, value: object, loc: Loc) -> Table | None:
        """Return ``value`` if it is a mapping, else None after adding the problem."""
        if isinstance(value, dict):
            return cast("Table", value)
        self.problems.append(line(loc, f"must be {self.word}"))
        return None

    def settings(self, values: Mapping[str, object], prefix: Loc) -> RegistrySettings | None:
        """Return the settings ``values`` give, overridden by ``MCPMOUNT_*`` variables."""
        return build_settings(
            values, self.environ, env_wins=True, prefix=prefix, problems=self.problems
        )

    def server(
        self,
        data: Table,
        loc: Loc,
        *,
        spelt: Mapping[str, str] = MappingProxyType({}),
        host: HostVariables | None = None,
    ) -> ServerSpec | None:
        """Expand and validate one server table; None after adding its problems.

        ``spelt`` maps our keys to the file's, for a file whose keys differ from ours;
        ``host`` resolves a host file's own variables.
        """
        if "pin" in data:
            self._rename_pin(data, loc)
        expanded: list[tuple[str, str]] = []
        skip = expand_server(data, loc, self.environ, self.problems, expanded, host)
        cwd = data.get("cwd")
        if isinstance(cwd, str) and cwd and ("cwd",) not in skip:
            data["cwd"] = str(self.base / cwd)  # an absolute cwd replaces the base
        try:
            spec = SPEC.validate_python(data)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            kind = kind_of(data)
            if kind is not None:  # the errors of the kind the union chose start with its tag
                for error in errors:
                    error["loc"] = error["loc"][1:]
            self.problems.extend(
                problem_lines(
                    errors,
                    loc,
                    table=self.word,
                    unknown=lambda key: _unknown_server_key(key, kind),
                    skip=skip,
                    rename=lambda key: (*loc, spelt[key]) if key in spelt else None,
                )
            )
            return None
        if not self._names_known(spec, data, expanded, loc):
            return None
        return spec.with_expanded(spec.named_secrets(expanded))

    def _rename_pin(self, data: Table, loc: Loc) -> None:
        """Take the old ``pin`` key as ``visible``, saying where to rename it; with both, the
        file is ambiguous, so that is a problem."""
        pin = data.pop("pin")
        if "visible" in data:
            self.problems.append(line((*loc, "pin"), PIN_AND_VISIBLE))
            return
        data["visible"] = pin
        logger.warning("%s", line((*loc, "pin"), PIN_RENAMED))

    def _names_known(
        self, spec: ServerSpec, data: Table, expanded: list[tuple[str, str]], loc: Loc
    ) -> bool:
        """Whether every name in ``secrets`` and ``not_secrets`` is one the table uses (a
        variable it expands, an ``env`` key, a header), after adding a problem per other."""
        used = {name for name, _ in expanded}
        for key in ("env", "headers"):
            if isinstance(table := data.get(key), dict):
                used.update(cast("dict[str, object]", table))
        ok = True
        for key in ("secrets", "not_secrets"):
            for i, name in enumerate(cast("list[str]", getattr(spec, key))):
                if name not in used:
                    hint = unknown_key(name, used).replace(
                        "unknown key",
                        "no variable, env key or header of this server is called so",
                        1,
                    )
                    self.problems.append(line((*loc, key, i), hint))
                    ok = False
        return ok


def _unknown_server_key(key: str, kind: str | None) -> str:
    if kind is None:  # no kind was found, so the key was taken for command or url misspelt
        return unknown_key(key, IMPLIED_BY)
    takers = [other for other, model in KINDS.items() if key in model.model_fields]
    if takers:
        return f"unknown key; only {' or '.join(takers)} servers take it"
    return unknown_key(key, KINDS[kind].model_fields)
