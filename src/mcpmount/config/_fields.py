"""The checked field types of server specs.

Each check raises ``PydanticCustomError`` with a message that never quotes the value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    FileUrl,
    SecretStr,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import PydanticCustomError

STRICT_DATA = ConfigDict(
    extra="forbid",
    frozen=True,
    strict=True,
    hide_input_in_errors=True,
    use_attribute_docstrings=True,
)
"""The model config of every table of a config file: unknown keys refused, no coercion,
immutable, and no value quoted in errors (values may be secrets)."""


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise PydanticCustomError("mcpmount_nul", "must not contain a NUL character")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("mcpmount_empty", "must not be empty")
    return _no_nul(value)


def _env_name(value: str) -> str:
    if not value or "=" in value or "\0" in value:
        raise PydanticCustomError(
            "mcpmount_env_name", "is not a valid environment variable name (empty, '=' or NUL)"
        )
    return value


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _header_name(value: str) -> str:
    if not _HEADER_NAME.fullmatch(value):
        raise PydanticCustomError("mcpmount_header_name", "is not a valid HTTP header name")
    return value


def _secret_without_nul(value: SecretStr) -> SecretStr:
    if "\0" in value.get_secret_value():
        raise PydanticCustomError("mcpmount_nul", "must not contain a NUL character")
    return value


def _secret_on_one_line(value: SecretStr) -> SecretStr:
    if any(ch in value.get_secret_value() for ch in "\r\n\0"):
        raise PydanticCustomError(
            "mcpmount_header_value", "must not contain a line break or a NUL character"
        )
    return value


_FILE_URL: TypeAdapter[FileUrl] = TypeAdapter(FileUrl)


def _root_uri(value: str) -> str:
    path = Path(_not_blank(value)).expanduser()
    uri = value if value.startswith("file://") else path.as_uri() if path.is_absolute() else ""
    try:
        _FILE_URL.validate_python(uri)
    except ValidationError:
        raise PydanticCustomError(
            "mcpmount_root", "must be a file:// URI, or an absolute path (or one under ~)"
        ) from None
    return uri


Text = Annotated[str, AfterValidator(_not_blank)]
"""A string that is not blank and holds no NUL."""

Arg = Annotated[str, AfterValidator(_no_nul)]
"""A command-line argument: any string without NUL, even an empty one."""


def _starts_with_program(argv: list[str]) -> list[str]:
    if not (argv and argv[0].strip()):
        raise PydanticCustomError("mcpmount_empty", "must start with the program to run")
    return argv


Command = Annotated[list[Arg], AfterValidator(_starts_with_program)]
"""A program and its arguments, one string each (a single string is refused, never split)."""

EnvName = Annotated[str, AfterValidator(_env_name)]
EnvValue = Annotated[SecretStr, AfterValidator(_secret_without_nul)]
HeaderName = Annotated[str, AfterValidator(_header_name)]
HeaderValue = Annotated[SecretStr, AfterValidator(_secret_on_one_line)]

RootUri = Annotated[str, AfterValidator(_root_uri)]
"""A root a server may work in: a ``file://`` URI, or an absolute path turned into one."""

Timeout = Annotated[float | None, Field(gt=0, allow_inf_nan=False)]
"""Seconds, or None to use the registry's."""

Limit = Annotated[int | None, Field(gt=0)]
"""A positive limit, or None to use the registry's."""
