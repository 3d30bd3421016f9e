"""A config file's text, read: what `mcpmount.config` turns into strict data.

Nothing here knows what a server or a setting is. It reads a TOML file, a JSON one with
the hosts' comments and trailing commas, or a host's YAML, into tables, bounding the
JSON's size and nesting before parsing; it expands ``${VAR}`` and the hosts' own
variables (``${env:X}``, ``${input:id}``, ``${workspaceFolder}``, ...); it says what
a config needs of its environment; and it words every problem as one line naming the
key, never a value.

Its modules, from the bottom up: ``_problems`` (problem lines), ``_json`` (`load_json`,
`strip_jsonc`), ``_read`` (files to tables), ``_variables`` (the hosts' variables),
``_expand`` (``${VAR}``) and ``_needs`` (`needed_variables`).
"""

from mcpmount.configfile._expand import expand, expand_server
from mcpmount.configfile._json import json_depth, load_json, strip_jsonc
from mcpmount.configfile._needs import needed_variables
from mcpmount.configfile._problems import Loc, format_loc, line, problem_lines, unknown_key
from mcpmount.configfile._read import Syntax, Table, read_config, read_syntax, syntax_of
from mcpmount.configfile._variables import (
    HostInput,
    HostVariables,
    InputPrompt,
    input_variable,
    read_inputs,
    workspace_of,
)

__all__ = [
    "HostInput",
    "HostVariables",
    "InputPrompt",
    "Loc",
    "Syntax",
    "Table",
    "expand",
    "expand_server",
    "format_loc",
    "input_variable",
    "json_depth",
    "line",
    "load_json",
    "needed_variables",
    "problem_lines",
    "read_config",
    "read_inputs",
    "read_syntax",
    "strip_jsonc",
    "syntax_of",
    "unknown_key",
    "workspace_of",
]
