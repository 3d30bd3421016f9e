"""Read and change one server entry of a host's file, in the file's own format, leaving
every other byte of it as it was: `servers_in`, `with_entry`, `without_entry`, `snippet`.

JSON and JSON with comments (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed,
Gemini CLI, LM Studio) are spliced as text (``_jsonc``); TOML (OpenAI Codex) goes through
``tomlkit`` and YAML (goose, Continue) through ``ruamel.yaml``'s round trip, which keep
comments, order and layout. Which one a file is follows from its name.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any, cast

from mcpmount.configfile import load_json, strip_jsonc
from mcpmount.errors import ConfigError
from mcpmount.hosts._jsonc import member, remove_member, set_member
from mcpmount.hosts._places import HostFile

__all__ = ["file_format", "servers_in", "snippet", "with_entry", "without_entry"]

Entry = dict[str, object]


def file_format(file: HostFile) -> str:
    """``json``, ``toml`` or ``yaml``: what the file is, by its name."""
    suffix = file.path.suffix.lower()
    return {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}.get(suffix, "json")


def _where(file: HostFile) -> list[str]:
    return [*file.within, file.key]


def _listed(file: HostFile) -> bool:
    """Whether the file keeps its servers as a list of named items (Continue's YAML)."""
    return file_format(file) == "yaml" and file.key == "mcpServers"


def servers_in(file: HostFile, text: str | None) -> dict[str, Entry]:
    """Return the servers the file holds, by name, as plain data (none for no file).

    Raises:
        ConfigError: If the file cannot be read as its format, or its servers are not a
            table of entries.
    """
    if text is None or not text.strip():
        return {}
    try:
        match file_format(file):
            case "toml":
                document: object = _toml().loads(text).unwrap()
            case "yaml":
                document = _yaml().load(text)
            case _:
                document = load_json(strip_jsonc(text))
    except Exception as exc:  # each library has its own errors: all mean "not readable"
        problem = f"is not {file_format(file).upper()} ({exc}); fix it, or move it away"
        raise ConfigError(str(file.path), [problem]) from None
    node = document
    for key in _where(file):
        node = cast("dict[str, object]", node).get(key) if isinstance(node, dict) else None
    if node is None:
        return {}
    if isinstance(node, list) and _listed(file):
        items = cast("list[object]", node)
        named = [cast("dict[str, object]", item) for item in items if isinstance(item, dict)]
        return {str(item.get("name")): _plain(item) for item in named}
    if not isinstance(node, dict):
        raise ConfigError(str(file.path), [f"{'.'.join(_where(file))}: must be a table"])
    servers = cast("dict[str, object]", node)
    return {str(name): _plain(entry) for name, entry in servers.items() if _is_table(entry)}


def _is_table(value: object) -> bool:
    return isinstance(value, dict)


def _plain(value: object) -> Entry:
    return cast("Entry", json.loads(json.dumps(value, default=str)))


def with_entry(file: HostFile, text: str | None, name: str, entry: Entry) -> str:
    """Return the file's text with the server ``name`` set to ``entry``; the rest as it
    was (a file that does not exist yet is made)."""
    match file_format(file):
        case "toml":
            tomlkit = _toml()
            document = tomlkit.parse(text or "")
            node: Any = document
            for key in _where(file):
                if key not in node:
                    node[key] = tomlkit.table(is_super_table=True)
                node = node[key]
            node[name] = _toml_table(entry)
            return tomlkit.dumps(document)
        case "yaml":
            yaml = _yaml(text or "")
            document: Any = yaml.load(text or "") or _new_yaml(file, name)
            node = document
            for key in _where(file)[:-1]:
                node = node.setdefault(key, {})
            last = _where(file)[-1]
            if _listed(file):
                items = node.setdefault(last, [])
                at = next((i for i, it in enumerate(items) if it.get("name") == name), None)
                if at is None:
                    items.append({"name": name} | entry)
                else:
                    items[at] = {"name": name} | entry
            else:
                node.setdefault(last, {})[name] = entry
            out = io.StringIO()
            yaml.dump(document, out)
            return out.getvalue()
        case _:
            try:
                return set_member(text or "", [*_where(file), name], entry)
            except ValueError as exc:
                raise ConfigError(str(file.path), [f"{exc}"]) from None


def without_entry(file: HostFile, text: str, name: str) -> str:
    """Return the file's text without the server ``name``; the rest as it was."""
    match file_format(file):
        case "toml":
            tomlkit = _toml()
            document = tomlkit.parse(text)
            node: Any = document
            for key in _where(file):
                node = node.get(key) if node is not None else None
            if node is not None and name in node:
                del node[name]
            return tomlkit.dumps(document)
        case "yaml":
            yaml = _yaml(text)
            document = yaml.load(text)
            node = document
            for key in _where(file):
                node = _get(node, key)
            if isinstance(node, list):
                kept = [it for it in cast("list[Any]", node) if it.get("name") != name]
                node[:] = kept
            elif isinstance(node, dict) and name in node:
                del node[name]
            out = io.StringIO()
            yaml.dump(document, out)
            return out.getvalue()
        case _:
            if member(text, [*_where(file), name]) is None:
                return text
            return remove_member(text, [*_where(file), name])


def _new_yaml(file: HostFile, name: str) -> dict[str, object]:
    """A new YAML file: Continue's says what it is (``name``, ``version``, ``schema``)."""
    if _listed(file):
        return {"name": name, "version": "0.0.1", "schema": "v1"}
    return {}


def _get(node: Any, key: str) -> Any:
    return node.get(key) if hasattr(node, "get") else None


def snippet(file: HostFile, name: str, entry: Entry) -> str:
    """Return the entry as its user would paste it into the file: under its key."""
    return with_entry(file, None, name, entry)


def _toml_table(entry: Entry) -> Any:
    tomlkit = _toml()
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(cast("dict[str, object]", value))
            table[key] = inline
        else:
            table[key] = value
    return table


def _toml() -> Any:
    import tomlkit  # only for a host whose file is TOML

    return tomlkit


def _yaml(text: str = "") -> Any:
    """A round-trip YAML (comments, order and quoting stay) that indents as ``text``."""
    from ruamel.yaml import YAML, util  # only for a host whose file is YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    if text.strip():
        found: object = util.load_yaml_guess_indent  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        guess = cast("Callable[[str], tuple[object, int, int | None]]", found)
        _, sequence, offset = guess(text)
        mapping = _mapping_indent(text)
        if offset is None:  # no block list to go by: lists start at their key's column
            yaml.indent(mapping=mapping, sequence=mapping, offset=0)
        else:
            yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _mapping_indent(text: str) -> int:
    """The indent of the first key under a top-level key: the file's step (else 2)."""
    previous = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if indent and not stripped.startswith("-") and previous.endswith(":"):
            return indent
        previous = stripped if indent == 0 else ""
    return 2
