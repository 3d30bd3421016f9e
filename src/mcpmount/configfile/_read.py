"""Reading a config file into its top-level table, without duplicate keys.

The file is TOML (ours, or Codex's), a host's JSON (with comments and trailing commas,
as VS Code, Cursor and Zed allow them) or a host's YAML (goose's, Continue's).

A file's syntax is told by its name (`syntax_of`): ``.json``/``.jsonc`` is JSON,
``.yaml``/``.yml`` YAML, anything else TOML."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Literal, TypeAlias, cast

from ruamel.yaml import YAML
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from mcpmount.configfile._json import load_json, strip_jsonc
from mcpmount.configfile._problems import Loc, format_loc
from mcpmount.errors import ConfigError

Table: TypeAlias = dict[str, object]
"""A TOML table or a JSON object, as parsed."""

Syntax: TypeAlias = Literal["toml", "json", "yaml"]
"""The syntax a config file is written in."""


def syntax_of(path: Path) -> Syntax:
    """Return the syntax of the file at ``path``, by its name."""
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonc"):
        return "json"
    return "yaml" if suffix in (".yaml", ".yml") else "toml"


class _JsonObject(list[tuple[str, object]]):
    """A JSON object as its key-value pairs, so duplicate keys can be found and named."""


def read_config(path: str | os.PathLike[str], problems: list[str]) -> tuple[Table, bool]:
    """Return the top-level table of a config file, and whether it is a host's JSON or
    YAML rather than TOML (`read_syntax` tells which); problems it has but can be read
    with (a duplicate key) go to ``problems``.

    Raises:
        ConfigError: If the file is missing, unreadable, or not in its syntax.
    """
    document, syntax = read_syntax(path, problems)
    return document, syntax != "toml"


def read_syntax(path: str | os.PathLike[str], problems: list[str]) -> tuple[Table, Syntax]:
    """Return the top-level table of a config file and its syntax (`syntax_of`); problems
    it has but can be read with (a duplicate key) go to ``problems``.

    Raises:
        ConfigError: If the file is missing, unreadable, or not in its syntax.
    """
    file = Path(path)
    syntax = syntax_of(file)
    document = read_document(file, problems, syntax=syntax)
    if document is None:
        raise ConfigError(str(path), problems)
    return document, syntax


def read_document(file: Path, problems: list[str], *, syntax: Syntax) -> Table | None:
    """Return the file's top-level table, or None after adding the problem."""
    try:
        text = file.read_text(encoding="utf-8-sig")  # tolerate the BOM some editors write
    except FileNotFoundError:
        problems.append("file not found")
        return None
    except IsADirectoryError:
        problems.append("is a directory, not a config file")
        return None
    except UnicodeDecodeError:
        problems.append("is not valid UTF-8")
        return None
    except OSError as exc:
        problems.append(f"cannot be read: {exc.strerror}")
        return None
    if syntax == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(f"invalid TOML: {exc}")
            return None
    if syntax == "yaml":
        return _read_yaml(text, problems)
    try:
        parsed = load_json(strip_jsonc(text), object_pairs_hook=_JsonObject)
        document = _unpack_json(parsed, (), problems)
    except json.JSONDecodeError as exc:
        problems.append(f"invalid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno})")
        return None
    except ValueError as exc:  # nested too deeply to parse
        problems.append(f"invalid JSON: {exc}")
        return None
    if not isinstance(document, dict):
        problems.append("must hold a JSON object")
        return None
    return cast("Table", document)


def _read_yaml(text: str, problems: list[str]) -> Table | None:
    """Return a YAML document's top-level mapping, or None after adding the problem.

    The safe loader builds plain data only (no tags that run code); a duplicate key is
    refused by it, and named without the values its own message quotes.
    """
    loader = YAML(typ="safe", pure=True)
    try:
        document = cast("object", loader.load(text))  # pyright: ignore[reportUnknownMemberType]
    except DuplicateKeyError as exc:
        problems.append(f"invalid YAML: a duplicate key{_yaml_at(exc)}")
        return None
    except MarkedYAMLError as exc:
        problem = cast("str | None", exc.problem)  # pyright: ignore[reportUnknownMemberType]
        problems.append(f"invalid YAML: {problem or 'not YAML'}{_yaml_at(exc)}")
        return None
    except (YAMLError, RecursionError) as exc:
        problems.append(f"invalid YAML: {type(exc).__name__}")
        return None
    if not isinstance(document, dict):
        problems.append("must hold a YAML mapping")
        return None
    return cast("Table", document)


def _yaml_at(exc: MarkedYAMLError) -> str:
    """Where the YAML error is, as `` (at line L, column C)``; ruamel.yaml's errors are
    untyped, hence the casts."""
    mark = cast("object", exc.problem_mark)  # pyright: ignore[reportUnknownMemberType]
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    if not isinstance(line, int) or not isinstance(column, int):
        return ""
    return f" (at line {line + 1}, column {column + 1})"


def _unpack_json(node: object, loc: Loc, problems: list[str]) -> object:
    """Turn `_JsonObject` pairs into dicts, naming every duplicate key."""
    if isinstance(node, _JsonObject):
        table: Table = {}
        for key, value in node:
            if key in table:
                problems.append(f"{format_loc((*loc, key))}: duplicate key")
            table[key] = _unpack_json(value, (*loc, key), problems)
        return table
    if isinstance(node, list):
        items = cast("list[object]", node)
        return [_unpack_json(item, (*loc, i), problems) for i, item in enumerate(items)]
    return node
