"""Code mode in the registry: the ``run_code`` meta-tool listed, and a program run with
every call it makes going through `Registry.call`.

Each call of the program is a call of the registry's own: the secret guard, the approval
gate and every interceptor see it as they see a model's call, and it goes over the
caller's session (``context``). The program is offered the tools a model may see,
deferred ones included (a deferred tool is one a model has not searched for yet; a program
may still call it, as a model may). ``run_code`` is listed only where a sandbox can run it;
a call where none can is answered with what to install, never run unsandboxed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

import mcp_types

from mcpmount.catalog import model_visible
from mcpmount.codemode import (
    RUN_CODE_NAME,
    code_error,
    code_sandbox_problem,
    python_namespaces,
    run_code_definition,
    run_program,
)
from mcpmount.config import RegistrySettings
from mcpmount.errors import RegistryError
from mcpmount.registry._view import Viewed
from mcpmount.search import TOOL_SEARCH_NAME, tool_search_definition

__all__ = [
    "META_TOOLS",
    "CodeRegistry",
    "code_names",
    "code_tools",
    "offers_code",
    "run_code_of",
    "with_code_mode",
]

META_TOOLS: Final = frozenset((RUN_CODE_NAME, TOOL_SEARCH_NAME, "call_tool"))
"""Names a program may not call: the meta-tools (``call_tool`` is serve's)."""


class CodeRegistry(Viewed, Protocol):
    """What code mode needs of a `Registry`: what a view reads and calls, and its settings.

    `Registry` is its only implementation (serve's front passes one too). It stays a
    protocol to break a real circle: ``_registry.py`` imports this module (`Registry.tools`
    lists ``run_code``, `Registry.run_code` runs it), so this module cannot import it. It is
    named for the registry it stands for, not "host", which means the embedding program.
    """

    @property
    def settings(self) -> RegistrySettings: ...


def offers_code(settings: RegistrySettings) -> bool:
    """Whether ``run_code`` is listed: enabled, and a sandbox can run it here."""
    return settings.code_mode.enabled and code_sandbox_problem() is None


def code_names(registry: CodeRegistry, sees: Callable[[str], bool] | None = None) -> list[str]:
    """The public names of the tools a program may import: every tool a model may see
    (deferred ones too); with ``sees``, only the names it accepts."""
    return [
        entry.name
        for entry in registry.mounted_tools()
        if model_visible(entry.definition) and (sees is None or sees(entry.name))
    ]


def code_tools(
    registry: CodeRegistry, sees: Callable[[str], bool] | None = None
) -> list[mcp_types.Tool]:
    """The definitions of `code_names`, as the model is shown them (secrets redacted)."""
    return [registry.definition(name) for name in code_names(registry, sees)]


def with_code_mode(manifest: list[mcp_types.Tool], registry: CodeRegistry) -> list[mcp_types.Tool]:
    """``manifest`` with ``tool_search`` (which then teaches signatures) and ``run_code``,
    when code mode is offered; else ``manifest`` itself."""
    if not offers_code(registry.settings):
        return manifest
    search = tool_search_definition(code_mode=True)
    listed = [search if tool.name == TOOL_SEARCH_NAME else tool for tool in manifest]
    if all(tool.name != TOOL_SEARCH_NAME for tool in listed):
        listed.append(search)
    namespaces = python_namespaces(code_names(registry))
    listed.append(run_code_definition(namespaces, registry.settings.code_mode))
    return listed


async def run_code_of(
    registry: CodeRegistry, source: str, context: object | None
) -> mcp_types.CallToolResult:
    """Run ``source`` with the tools a model may see, each call through ``registry.call``."""

    async def call(name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        if name in META_TOOLS:
            return code_error(f"{name} cannot be called from a program")
        try:
            return await registry.call(name, arguments, context=context)
        except RegistryError as exc:  # what a model's call would be told
            return code_error(str(exc))

    return await run_program(source, code_tools(registry), call, registry.settings.code_mode)
