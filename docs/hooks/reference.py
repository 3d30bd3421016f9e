"""MkDocs hook: the references and included parts of the docs, written from their sources.

The docs read the same on GitHub as on the site: what is generated is committed, between
two HTML comments that GitHub does not show, and refreshed here on every build:

    <!-- reference: config mcpmount.config.RegistrySettings -->
    ...generated...
    <!-- end: reference -->

- ``config MODEL``: a table of the model's keys (for a server kind, only the keys it adds
  to `ServerBase`): each key's TOML type and bounds, its default, and the docstring under
  its field. A field without a docstring, or an unknown model, fails the build.
- ``cli``: every command of ``mcpmount``'s argparse parser with its usage, description and
  arguments.
- ``api MODULE``: a table of the module's public names with the first line of each
  docstring; the site shows the module's whole docstrings (mkdocstrings) instead.
- ``layout``: every package and module of ``src/mcpmount``, one row each, on its floor,
  with the first paragraph of its docstring (at most `SUMMARY_LIMIT` characters). The
  floors are those ``tests/test_public_api.py`` enforces (``FLOORS``, ``SERVE_ROOMS``).
- ``<!-- include: PATH[:SECTION] -->``: a Markdown file, or the part of it between its
  ``<!-- --8<-- [start:SECTION] -->`` and ``[end:SECTION]`` lines (README.md's tour).

``python docs/hooks/reference.py`` rewrites the committed pages (``tests/docs`` fails while
one is stale).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from mcpmount.cli._app import _parser  # pyright: ignore[reportPrivateUsage]
from mcpmount.config import ServerBase

ROOT = Path(__file__).resolve().parents[2]
_REGION = re.compile(
    r"^<!-- (?P<kind>reference|include): (?P<what>[^\s>]+)(?: (?P<arg>[\w.]+))? -->\n"
    r"(?P<body>.*?)"
    r"^<!-- end: (?P=kind) -->$",
    re.M | re.S,
)
_USAGE_WIDTH = 88


def expand(markdown: str, *, site: bool = False) -> str:
    """``markdown`` with every region written afresh (``site``: as the site shows it)."""

    def region(match: re.Match[str]) -> str:
        kind, what, arg = match["kind"], match["what"], match["arg"]
        opening = f"<!-- {kind}: {what}{f' {arg}' if arg else ''} -->"
        if kind == "include":
            body = _included(what)
        elif what == "cli":
            body = cli_reference()
        elif what == "config":
            body = config_table(_model(arg))
        elif what == "api":
            body = _api_directive(arg) if site else api_table(arg)
        elif what == "layout":
            body = layout_table()
        else:
            raise ValueError(f"reference: unknown reference {what!r}")
        return f"{opening}\n{body.strip()}\n<!-- end: {kind} -->"

    return _REGION.sub(region, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Refresh every region of a page, as the site shows it."""
    return expand(markdown, site=True)


def _included(what: str) -> str:
    path, _, section = what.partition(":")
    text = (ROOT / path).read_text()
    if not section:
        return text
    start, end = f"<!-- --8<-- [start:{section}] -->", f"<!-- --8<-- [end:{section}] -->"
    if start not in text or end not in text:
        raise ValueError(f"include: {path} has no section {section!r}")
    return text.split(start, 1)[1].split(end, 1)[0]


def pages() -> list[Path]:
    """The pages that hold regions: every page of docs/."""
    return sorted((ROOT / "docs").rglob("*.md"))


# -- library API ------------------------------------------------------------------------------


def _api_directive(module: str | None) -> str:
    if module == "mcpmount":
        return "::: mcpmount\n    options:\n      show_submodules: false"
    return f"::: {module}"


def api_table(module: str | None) -> str:
    """A table of ``module``'s public names (``__all__``) and their docstrings' first lines."""
    loaded = importlib.import_module(module or "")
    rows = [f"### `{module}`", "", "| name | what it is |", "| --- | --- |"]
    for name in loaded.__all__:
        doc = inspect.getdoc(getattr(loaded, name)) or ""
        if isinstance(getattr(loaded, name), str | int | float | tuple | frozenset):
            doc = ""  # a constant's getdoc is its type's
        first = " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {first} |")
    return "\n".join(rows)


# -- layout -----------------------------------------------------------------------------------

PACKAGE = ROOT / "src" / "mcpmount"
FLOOR_RULES = ROOT / "tests" / "test_public_api.py"
_TOP = (PACKAGE / "__init__.py", PACKAGE / "__main__.py")
"""The package itself, above every floor: its lazy public names, and ``python -m``."""
SUMMARY_LIMIT = 200
"""The most a layout row says of a module: its docstring's first paragraph is its summary."""


def layout_table() -> str:
    """One row per package and module of the package, rooms from the top floor down."""
    floors: dict[str, int] = _enforced("FLOORS")
    rows = ["| floor | module | what it is |", "| --- | --- | --- |"]
    rows += [f"| | `{_shown(path)}` | {_summary(path)} |" for path in _TOP]
    for room in sorted(floors, key=lambda room: (-floors[room], room)):
        path = PACKAGE / room
        rows += _rows(path if path.is_dir() else path.with_suffix(".py"), str(floors[room]))
    return "\n".join(rows)


def _rows(path: Path, floor: str) -> list[str]:
    """``path``'s row, and for a package those of its modules, then of its sub-rooms."""
    if path.is_file():
        return [f"| {floor} | `{_shown(path)}` | {_summary(path)} |"]
    rows = [f"| {floor} | `{_shown(path)}` | {_summary(path / '__init__.py')} |"]
    modules = sorted(p for p in path.glob("*.py") if p.name != "__init__.py")
    rows += [f"| | `{_shown(module)}` | {_summary(module)} |" for module in modules]
    rooms = [p for p in path.iterdir() if (p / "__init__.py").is_file()]
    order: dict[str, int] = _enforced("SERVE_ROOMS") if path.name == "serve" else {}
    for room in sorted(rooms, key=lambda room: (-order.get(room.name, 0), room.name)):
        rows += _rows(room, floor)
    return rows


def _shown(path: Path) -> str:
    if path == PACKAGE / "__init__.py":
        return "mcpmount"
    name = str(path.relative_to(PACKAGE))
    return f"{name}/" if path.is_dir() else name


def _summary(path: Path) -> str:
    """The first paragraph of ``path``'s docstring, on one line."""
    where = path.relative_to(ROOT)
    doc = ast.get_docstring(ast.parse(path.read_text()))
    if not doc:
        raise ValueError(f"layout: {where} has no docstring; say in one line what it is")
    summary = " ".join(doc.split("\n\n")[0].split())
    if len(summary) > SUMMARY_LIMIT:
        raise ValueError(
            f"layout: the first paragraph of {where}'s docstring is {len(summary)} characters;"
            f" the layout table takes a summary of at most {SUMMARY_LIMIT}: shorten it"
        )
    return summary.replace("|", "\\|")


def _enforced(name: str) -> Any:
    """The literal ``name = ...`` of ``tests/test_public_api.py``: the floors it checks."""
    for node in ast.parse(FLOOR_RULES.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise ValueError(f"layout: {FLOOR_RULES.relative_to(ROOT)} no longer sets {name}")


# -- configuration ----------------------------------------------------------------------------


def _model(dotted: str | None) -> type[BaseModel]:
    module, _, name = (dotted or "").rpartition(".")
    model = getattr(importlib.import_module(module), name, None) if module else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ValueError(f"reference: {dotted!r} is not a pydantic model")
    return model


def config_table(model: type[BaseModel]) -> str:
    """A Markdown table of ``model``'s keys; a server kind's own keys only."""
    kind = issubclass(model, ServerBase) and model is not ServerBase
    inherited = ServerBase.model_fields if kind else {}
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if name in inherited:
            continue
        if not field.description:
            raise ValueError(f"reference: {model.__name__}.{name} has no docstring")
        description = " ".join(field.description.split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(field)} | {_default(field)} | {description} |")
    return "\n".join(rows)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    return f"`{_toml(value)}`"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in typing.cast("list[object]", value)) + "]"
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    if isinstance(value, BaseModel):  # a sub-table: its own keys' defaults
        return "{}"
    return str(value)


def _type(field: FieldInfo) -> str:
    words = _type_words(field.annotation)
    bounds = list(_bounds(field.metadata))
    return words + (f" ({', '.join(bounds)})" if bounds else "")


def _type_words(annotation: object) -> str:
    """How a TOML file writes a value of ``annotation``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        bounds = list(_bounds(args[1:]))
        return _type_words(args[0]) + (f" ({', '.join(bounds)})" if bounds else "")
    if origin is typing.Literal:
        return " \\| ".join(f'`"{arg}"`' for arg in args)
    if origin in (typing.Union, types.UnionType):
        kinds = [_type_words(arg) for arg in args if arg is not type(None)]
        return " or ".join(kinds)
    if origin is list:
        return f"array of {_plural(_type_words(args[0]))}"
    if origin is dict:
        value = args[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return f"tables (`{value.__name__}`) by name"
        return f"table of {_plural(_type_words(value))}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"table (`{annotation.__name__}`)"
    names = {bool: "boolean", int: "integer", float: "number", str: "string", SecretStr: "string"}
    if annotation in names:
        return names[annotation]
    raise ValueError(f"reference: no TOML name for {annotation!r}")


def _plural(words: str) -> str:
    return re.sub(r"^(boolean|integer|number|string)", r"\1s", words)


def _bounds(metadata: typing.Iterable[object]) -> Iterator[str]:
    for item in metadata:
        match item:
            case annotated_types.Gt(gt=bound):
                yield f"> {_toml(bound)}"
            case annotated_types.Ge(ge=bound):
                yield f">= {_toml(bound)}"
            case annotated_types.Lt(lt=bound):
                yield f"< {_toml(bound)}"
            case annotated_types.Le(le=bound):
                yield f"<= {_toml(bound)}"
            case _:
                pass


# -- command line -----------------------------------------------------------------------------


def cli_reference() -> str:
    """Every command of the parser: its usage, what it does and its arguments."""
    parser = _parser()
    parts = [_usage(parser), "", _arguments(parser)]
    for name, command in _commands(parser):
        description = command.description or ""
        parts += ["", f"## `mcpmount {name}`", "", description[:1].upper() + description[1:], ""]
        parts += [_usage(command), "", _arguments(command)]
    return "\n".join(parts)


def _commands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse lists them only here
        if isinstance(action, argparse._SubParsersAction):
            yield from typing.cast("dict[str, argparse.ArgumentParser]", action.choices).items()


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=_USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return f"```text\n{formatter.format_help().strip()}\n```"


def _arguments(parser: argparse.ArgumentParser) -> str:
    rows = ["| argument | meaning | default |", "| --- | --- | --- |"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        name = ", ".join(action.option_strings) or action.metavar or action.dest
        if action.choices is not None:
            name += " {" + ",".join(map(str, action.choices)) + "}"
        elif action.option_strings and action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        default = action.default
        shown = "" if default in (None, False, [], "==SUPPRESS==") else f"`{default}`"
        meaning = (action.help or "").replace("|", "\\|")
        rows.append(f"| `{name}` | {meaning} | {shown} |")
    return "\n".join(rows)


if __name__ == "__main__":
    for page in pages():
        before = page.read_text()
        if (after := expand(before)) != before:
            page.write_text(after)
            sys.stdout.write(f"wrote {page.relative_to(ROOT)}\n")
