"""MkDocs hook: the configuration and command-line references, written from the code.

A page asks for a reference with an HTML comment on a line of its own:

    <!-- reference: config mcpmount.config.RegistrySettings -->
    <!-- reference: cli -->

``config MODEL`` becomes a table of the model's keys (for a server kind, only the keys it
adds to `ServerBase`): each key's TOML type and bounds, its default, and the docstring under
its field. ``cli`` becomes every command of ``mcpmount``'s argparse parser with its usage,
description and arguments. A field without a docstring, or an unknown model, fails the build.
"""

from __future__ import annotations

import argparse
import importlib
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from mcpmount.cli._app import _parser  # pyright: ignore[reportPrivateUsage]
from mcpmount.config import ServerBase

_MARKER = re.compile(r"^<!-- reference: (?P<what>config|cli)(?: (?P<arg>[\w.]+))? -->$", re.M)
_USAGE_WIDTH = 88


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every reference marker of a page with its generated Markdown."""

    def expand(match: re.Match[str]) -> str:
        if match["what"] == "cli":
            return cli_reference()
        return config_table(_model(match["arg"]))

    return _MARKER.sub(expand, markdown)


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
