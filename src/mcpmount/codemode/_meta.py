"""The ``run_code`` meta-tool: its definition, which teaches a model the ``tools`` module,
and the reading of its arguments.

The description is the model's only manual, so it says all a first program needs: how to
import a namespace, what a function returns, which exception a failed call raises, that
only printed output comes back, and how to learn the signatures without full JSON schemas
(``tool_search`` with ``"format": "python"``, its query ``describe:<namespace>`` for a
whole namespace). It
lists the namespaces the caller sees, at most `MAX_LISTED_NAMESPACES` of them: a list of
hundreds would cost the tokens code mode saves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import mcp_types

from mcpmount.codemode._limits import CodeLimits, ToolCaller
from mcpmount.codemode._runner import run_code
from mcpmount.codemode._stubs import python_names
from mcpmount.config import CodeModeSettings
from mcpmount.errors import SandboxUnavailableError
from mcpmount.naming import SEPARATOR

__all__ = [
    "MAX_LISTED_NAMESPACES",
    "RUN_CODE_NAME",
    "code_error",
    "code_limits",
    "python_namespaces",
    "read_code",
    "run_code_definition",
    "run_program",
]

RUN_CODE_NAME: Final = "run_code"
"""The public name of the meta-tool (no mounted tool's name lacks ``__``, so none clashes)."""

MAX_LISTED_NAMESPACES: Final = 40
"""The most namespaces the definition names; the rest are counted."""

_USAGE: Final = 'run_code takes {"code": string}: the Python program to run'


def run_code_definition(
    namespaces: Sequence[str], settings: CodeModeSettings | None = None
) -> mcp_types.Tool:
    """Return the definition of ``run_code``.

    Args:
        namespaces: The ``tools`` attributes the caller's program may import (its
            namespaces as Python identifiers: `python_namespaces`).
        settings: The limits to tell the model of; default: the defaults.
    """
    settings = settings if settings is not None else CodeModeSettings()
    shown = sorted(namespaces)[:MAX_LISTED_NAMESPACES]
    more = len(namespaces) - len(shown)
    listed = ", ".join(shown) if shown else "(none mounted yet)"
    if more > 0:
        listed += f", and {more} more (tool_search finds their tools)"
    example = shown[0] if shown else "fs"
    description = (
        "Run a short Python program that calls the tools as functions, in a fresh sandbox "
        "(no network, no files of the user's), and return what it prints. Use it to chain "
        "several calls, or to filter or combine large results, in one step: only the "
        "printed output comes back to you.\n"
        f"- Import a namespace and call its functions with keyword arguments: "
        f'`from tools import {example}` then `{example}.<function>(arg="...")`.\n'
        "- A function returns the tool's structured content (a dict) when it has one, "
        "else its text (a str); a failed or refused call raises `tools.ToolError`.\n"
        "- print() what you need; an uncaught exception returns its traceback.\n"
        "- Learn the signatures with tool_search: "
        '{"query": "<what you need>", "format": "python"}, or '
        '{"query": "describe:<namespace>", "format": "python"} for all of a namespace.\n'
        f"Limits: {settings.timeout:g} s, {settings.max_calls} tool calls and "
        f"{settings.output_bytes} bytes of output per run.\n"
        f"Namespaces: {listed}."
    )
    return mcp_types.Tool(
        name=RUN_CODE_NAME,
        title="Run a program that calls tools",
        description=description,
        input_schema={
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The Python program; print() what you want back.",
                },
            },
            "required": ["code"],
            "additionalProperties": False,
        },
    )


def python_namespaces(names: Iterable[str]) -> list[str]:
    """The ``tools`` module's namespaces for the tools of these public names, as the
    program imports them (`python_names`' identifiers), sorted.

    An identifier depends only on the namespaces, so one tool of each stands for all of
    them: a registry of thousands of tools lists its namespaces without a definition
    built.
    """
    one_each: dict[str, str] = {}
    for name in names:
        namespace, separator, _ = name.partition(SEPARATOR)
        if separator and namespace:
            one_each.setdefault(namespace, name)
    stand_ins = [mcp_types.Tool(name=name, input_schema={}) for name in one_each.values()]
    return sorted({namespace for namespace, _ in python_names(stand_ins).values() if namespace})


def read_code(arguments: Mapping[str, Any] | None) -> str | mcp_types.CallToolResult:
    """Return the program of a ``run_code`` call, or the error result a malformed call gets."""
    args = dict(arguments or {})
    code = args.get("code")
    if not isinstance(code, str):
        return code_error(_USAGE)
    if extra := sorted(set(args) - {"code"}):
        return code_error(f"{_USAGE}; it got {', '.join(extra)} too")
    if not code.strip():
        return code_error(f"{_USAGE}; the program is empty")
    return code


def code_limits(settings: CodeModeSettings) -> CodeLimits:
    """The runner's limits of ``[registry.code_mode]``."""
    return CodeLimits(
        timeout=settings.timeout,
        cpu_seconds=settings.cpu_seconds,
        memory_bytes=settings.memory_mb << 20,
        output_bytes=settings.output_bytes,
        max_calls=settings.max_calls,
    )


def code_error(text: str) -> mcp_types.CallToolResult:
    """An error result the model reads: nothing was run."""
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=True
    )


async def run_program(
    source: str,
    tools: Sequence[mcp_types.Tool],
    call: ToolCaller,
    settings: CodeModeSettings,
) -> mcp_types.CallToolResult:
    """Run ``source`` with ``tools`` under ``settings``' limits; the result the model reads
    (where no sandbox can run it: an error saying what to install, nothing run)."""
    try:
        run = await run_code(source, tools, call, limits=code_limits(settings))
    except SandboxUnavailableError as exc:
        return code_error(f"{RUN_CODE_NAME} cannot run here, and never runs unsandboxed: {exc}")
    return run.result
