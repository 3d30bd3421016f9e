"""Load a generated ``tools`` module the way the sandbox does, with a recording
``_mcpmount_code``: the in-sandbox side of a call, not the SDK."""

from __future__ import annotations

import sys
import types
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types

__all__ = ["Recorder", "hostile_texts", "loaded", "tool"]


class RecordedToolError(Exception):
    """The recording module's ``ToolError``."""


@dataclass
class Recorder:
    """What the generated functions sent, and what they get back."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=lambda: [])
    answer: object = "answered"

    def call(self, name: str, arguments: dict[str, Any]) -> object:
        self.calls.append((name, dict(arguments)))
        return self.answer


@contextmanager
def loaded(source: str) -> Generator[tuple[types.ModuleType, Recorder]]:
    """Compile and run ``source`` as module ``tools`` over a recording ``_mcpmount_code``;
    both are removed from ``sys.modules`` afterwards."""
    recorder = Recorder()
    code = types.ModuleType("_mcpmount_code")
    code.call = recorder.call  # type: ignore[attr-defined]
    code.ToolError = RecordedToolError  # type: ignore[attr-defined]
    module = types.ModuleType("tools")
    saved = {name: sys.modules.get(name) for name in ("_mcpmount_code", "tools")}
    sys.modules["_mcpmount_code"] = code
    sys.modules["tools"] = module
    try:
        exec(compile(source, "tools.py", "exec"), module.__dict__)
        yield module, recorder
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def tool(
    name: str,
    properties: dict[str, Any] | None = None,
    required: list[str] | None = None,
    description: str | None = None,
    **schema: Any,
) -> mcp_types.Tool:
    """A tool with an object input schema of these properties."""
    input_schema: dict[str, Any] = {"type": "object", "properties": properties or {}, **schema}
    if required is not None:
        input_schema["required"] = required
    return mcp_types.Tool(name=name, description=description, input_schema=input_schema)


def hostile_texts() -> list[str]:
    """Texts that try to end a string, a docstring or a line of source, or to hide."""
    escape = "\x1b[2J\x1b]0;pwned\x07\x9b31m\u202etxt.exe\u2066\u200b\U000e0041\x7f"
    breakouts = [
        '"""\nimport builtins; builtins.PWNED = True\n"""',
        "'''\nimport builtins; builtins.PWNED = True\n'''",
        '"',
        '""',
        '"""',
        'ends in a quote"',
        "ends in a backslash\\",
        "\\N{nope} \\x \\u12 \\",
        '\\"""\nbuiltins.PWNED = True  #',
        "\r\nimport builtins; builtins.PWNED = True\r",
        "\x00null\x00",
        "\ud800 lone surrogate \udfff",
        "\u2028import builtins; builtins.PWNED = True\u2029",
        "\x0c\x0b form feeds",
        "class",
        "__class__",
        "__init__",
        "ToolError",
        "Any",
        "Literal",
        "_call",
        "_code_call",
        "annotations",
        "0starts_with_a_digit",
        "",
        " ",
        "é-ß-漢字",
        "a" * 500,
        escape,
        "[bold red]loud[/] [link=https://evil.example]click[/link]",
    ]
    return breakouts
