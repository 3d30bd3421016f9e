"""Reading a config file into its top-level table: TOML, or a host's JSON (with comments
and trailing commas, as VS Code and Cursor allow them) without duplicate keys."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import TypeAlias, cast

from mcpmount.configfile._json import load_json, strip_jsonc
from mcpmount.configfile._problems import Loc, format_loc
from mcpmount.errors import ConfigError

Table: TypeAlias = dict[str, object]
"""A TOML table or a JSON object, as parsed."""


class _JsonObject(list[tuple[str, object]]):
    """A JSON object as its key-value pairs, so duplicate keys can be found and named."""


def read_config(path: str | os.PathLike[str], problems: list[str]) -> tuple[Table, bool]:
    """Return the top-level table of a config file, and whether it is a host's JSON (its
    name ends in ``.json``) rather than our TOML; problems it has but can be read with
    (a duplicate key) go to ``problems``.

    Raises:
        ConfigError: If the file is missing, unreadable, or not TOML or JSON.
    """
    file = Path(path)
    is_json = file.suffix.lower() == ".json"
    document = read_document(file, problems, json_file=is_json)
    if document is None:
        raise ConfigError(str(path), problems)
    return document, is_json


def read_document(file: Path, problems: list[str], *, json_file: bool) -> Table | None:
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
    if not json_file:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(f"invalid TOML: {exc}")
            return None
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
