"""The variables of MCP host files beyond ``${VAR}``: VS Code's and Cursor's.

VS Code (``.vscode/mcp.json``, code.visualstudio.com/docs/copilot/reference/mcp-configuration)
and Cursor (``.cursor/mcp.json``, cursor.com/docs/context/mcp, "Config interpolation") write
``${env:NAME}`` for a variable of the environment, ``${userHome}``, ``${workspaceFolder}``
(here: the folder holding the file's ``.vscode/`` or ``.cursor/``, else the file's own),
``${workspaceFolderBasename}``, ``${pathSeparator}`` and ``${/}``. VS Code adds
``${input:id}``: a value asked of the user, declared in the file's ``inputs``.

An input is taken from ``MCPMOUNT_INPUT_<ID>`` (`input_variable`) first; else it is asked
through the caller's `InputPrompt` (the command line asks on a terminal, ``mcpmount serve``
never asks); else its ``default``; else it is a problem that names the variable to set.
Each input is asked at most once per load, and its answer is a secret.

What cannot mean anything outside an editor (``${command:...}``, ``${config:...}``,
``${file}``) is a problem that says so and how to write the value instead.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias, cast

from mcpmount.configfile._problems import Loc, line
from mcpmount.configfile._read import Table

__all__ = [
    "PREDEFINED",
    "HostInput",
    "HostVariables",
    "InputPrompt",
    "input_variable",
    "read_inputs",
    "workspace_of",
]


@dataclass(frozen=True, slots=True)
class HostInput:
    """One entry of a VS Code file's ``inputs``: a value to ask the user for."""

    id: str
    """What ``${input:<id>}`` names."""

    description: str
    """What to show when asking."""

    password: bool = False
    """Whether the answer is typed without echo."""

    default: str | None = None
    """The answer when nobody is asked."""

    options: tuple[str, ...] = ()
    """A ``pickString`` input's choices; empty for a ``promptString``."""

    @property
    def variable(self) -> str:
        """The environment variable that answers it (`input_variable`)."""
        return input_variable(self.id)


InputPrompt: TypeAlias = Callable[[HostInput], str | None]
"""Asks the user for one input; None when the answer could not be had (end of input)."""

PREDEFINED = frozenset({"userHome", "workspaceFolder", "workspaceFolderBasename", "pathSeparator"})
"""The hosts' predefined variables that mean something here (and ``${/}``)."""

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")

_EDITOR_ONLY = frozenset(
    {
        "cwd",
        "file",
        "fileBasename",
        "fileBasenameNoExtension",
        "fileDirname",
        "fileExtname",
        "fileWorkspaceFolder",
        "lineNumber",
        "relativeFile",
        "relativeFileDirname",
        "selectedText",
        "execPath",
        "defaultBuildTask",
    }
)
"""VS Code's predefined variables that name the editor's state, which mcpmount has none of."""


def input_variable(input_id: str) -> str:
    """Return the variable that answers ``${input:<input_id>}``: ``MCPMOUNT_INPUT_<ID>``,
    the id upper-cased with every other character than a letter or digit as ``_``."""
    return "MCPMOUNT_INPUT_" + _NOT_ALNUM.sub("_", input_id).upper()


def workspace_of(file: Path) -> Path:
    """Return the folder ``${workspaceFolder}`` names for a host file: the one holding its
    ``.vscode/`` or ``.cursor/`` folder, else the file's own folder."""
    folder = file.absolute().parent
    return folder.parent if folder.name in (".vscode", ".cursor") else folder


def read_inputs(value: object, problems: list[str]) -> dict[str, HostInput]:
    """Return a VS Code file's ``inputs`` by id, adding a problem for each broken one."""
    if not isinstance(value, list):
        problems.append(line(("inputs",), "must be a list of objects"))
        return {}
    found: dict[str, HostInput] = {}
    for i, raw in enumerate(cast("list[object]", value)):
        loc: Loc = ("inputs", i)
        if not isinstance(raw, dict):
            problems.append(line(loc, "must be an object"))
            continue
        entry = cast("Table", raw)
        kind, input_id = entry.get("type", "promptString"), entry.get("id")
        if not isinstance(input_id, str) or not input_id:
            problems.append(line((*loc, "id"), "is required (a string)"))
            continue
        if kind not in ("promptString", "pickString"):
            problems.append(
                line(
                    (*loc, "type"),
                    f"{json.dumps(kind)} is VS Code's to run; mcpmount asks only "
                    f'"promptString" and "pickString" inputs (or set {input_variable(input_id)})',
                )
            )
            continue
        description = entry.get("description", input_id)
        default = entry.get("default")
        options = entry.get("options", [])
        labels = [
            o if isinstance(o, str) else cast("Table", o).get("value")
            for o in cast("list[object]", options if isinstance(options, list) else [])
            if isinstance(o, str | dict)
        ]
        found[input_id] = HostInput(
            id=input_id,
            description=description if isinstance(description, str) else input_id,
            password=entry.get("password") is True,
            default=default if isinstance(default, str) else None,
            options=tuple(label for label in labels if isinstance(label, str)),
        )
    return found


@dataclass
class HostVariables:
    """Resolves the host-file variables of one file (see the module docstring)."""

    workspace: Path
    """What ``${workspaceFolder}`` names."""

    inputs: Mapping[str, HostInput]
    """The file's ``inputs`` by id; empty when it has none."""

    ask: InputPrompt | None
    """Asks the user for an input; None where nobody can be asked."""

    _answers: dict[str, str | None] = field(
        default_factory=dict[str, "str | None"], init=False, repr=False
    )
    """Each input asked so far, and its answer (None: nobody answered)."""

    def predefined(self, name: str) -> str | None:
        """Return the value of a predefined ``${name}``, or None if it is not one."""
        match name:
            case "userHome":
                return str(Path.home())
            case "workspaceFolder":
                return str(self.workspace)
            case "workspaceFolderBasename":
                return self.workspace.name
            case "pathSeparator" | "/":
                return os.sep
            case _:
                return None

    def scheme(
        self, scheme: str, arg: str, where: str, environ: Mapping[str, str], problems: list[str]
    ) -> tuple[str, bool]:
        """Return the value of ``${scheme:arg}`` and whether it is a secret ("" after
        adding the problem)."""
        if scheme == "env":
            if (found := environ.get(arg)) is None:
                problems.append(f"{where}: environment variable {arg} is not set")
                return "", False
            return found, True
        if scheme == "input":
            return self._input(arg, where, environ, problems), True
        problems.append(f"{where}: {unsupported(scheme, arg)}")
        return "", False

    def editor_only(self, name: str) -> str | None:
        """Return why ``${name}`` cannot be resolved here, if it names the editor's state."""
        if name in _EDITOR_ONLY:
            return (
                f"${{{name}}} is VS Code's name for the editor's state, which mcpmount "
                "has none of; write the value itself"
            )
        return None

    def _input(
        self, input_id: str, where: str, environ: Mapping[str, str], problems: list[str]
    ) -> str:
        wanted = self.inputs.get(input_id)
        variable = input_variable(input_id)
        if (given := environ.get(variable)) is not None:
            return given
        if wanted is None:
            problems.append(
                f"{where}: ${{input:{input_id}}} names no input: declare it in the file's "
                f'"inputs" (VS Code: {{"id": {json.dumps(input_id)}, "type": "promptString"}}) '
                f"or set {variable}"
            )
            return ""
        if input_id not in self._answers:
            self._answers[input_id] = self.ask(wanted) if self.ask is not None else None
        answer = self._answers[input_id]
        if answer is not None:
            return answer
        if wanted.default is not None:
            return wanted.default
        said = f" ({json.dumps(wanted.description)})" if wanted.description != input_id else ""
        problems.append(
            f"{where}: ${{input:{input_id}}}{said} must be answered and nobody can be asked "
            f"here; set {variable}"
        )
        return ""


def unsupported(scheme: str, arg: str) -> str:
    """Say why ``${scheme:arg}`` cannot be resolved, and how to write the value instead."""
    what = "runs an editor command" if scheme == "command" else "reads an editor setting"
    return (
        f"${{{scheme}:{arg}}} {what} (VS Code's syntax), which mcpmount cannot do; write the "
        "value itself, ${env:NAME} for a variable of the environment, or ${input:id} for one "
        "to ask"
    )


def outside_host_file(scheme: str, arg: str) -> str:
    """Say how to write ``${scheme:arg}`` in our TOML, which has none of the hosts' variables."""
    if scheme == "env":
        return (
            f"${{env:{arg}}} is how VS Code and Cursor write a variable; in a TOML config "
            f"write ${{{arg}}}"
        )
    if scheme == "input":
        return (
            f"${{input:{arg}}} is VS Code's (a value asked of the user); in a TOML config "
            f"write ${{{input_variable(arg)}}} and set that variable"
        )
    return unsupported(scheme, arg)
