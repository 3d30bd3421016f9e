"""``tool_search`` for code mode: ``describe:<namespace>``, and found tools as Python stubs.

``describe:github`` returns every tool of one namespace, whatever ``limit`` says: what a
model writing a program over a server wants to read at once. A namespace the caller may
not see is answered exactly like one that does not exist (the same hint, naming only the
namespaces it may see). With ``"format": "python"``, the found tools come back as the
signatures and docstrings of the functions a ``run_code`` program calls (`stubs`), named as
the sandbox's ``tools`` module names them.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import Final

import mcp_types

from mcpmount.codemode import stubs
from mcpmount.search._index import SearchIndex
from mcpmount.search._result import Hit, SearchResult
from mcpmount.tool import MountedTool

__all__ = ["DESCRIBE_PREFIX", "describe", "is_describe", "python_stubs"]

DESCRIBE_PREFIX: Final = "describe:"

_MAX_NAMED: Final = 20
"""At most this many namespaces are named in the hint of an unknown one."""


def is_describe(query: str) -> bool:
    """Whether ``query`` is a ``describe:`` query (any case, spaces around allowed)."""
    return query.strip()[: len(DESCRIBE_PREFIX)].lower() == DESCRIBE_PREFIX


def describe(
    index: SearchIndex,
    query: str,
    *,
    servers: Container[str] | None = None,
    tools: Container[str] | None = None,
) -> SearchResult:
    """Every tool of the namespace a ``describe:<namespace>`` query names, by public name.

    The namespace may be given as mounted (``my-fs``) or as its Python name (``my_fs``).
    ``servers`` and ``tools`` hide what they leave out, as in `SearchIndex.search`.
    """
    wanted = query.strip()[len(DESCRIBE_PREFIX) :].strip()
    shown = _visible(index.tools(), servers, tools)
    namespaces = sorted({tool.server for tool in shown})
    if not wanted:
        return SearchResult((), "describe: needs a namespace, e.g. " + _examples(namespaces))
    chosen = wanted if wanted in namespaces else None
    if chosen is None:
        alike = [ns for ns in namespaces if _loose(ns) == _loose(wanted)]
        chosen = alike[0] if len(alike) == 1 else None
    if chosen is None:
        # The asked name is not repeated: the answer for a hidden namespace and for one
        # that does not exist must be the same, whatever the name.
        return SearchResult((), f"no such namespace; try {_examples(namespaces)}")
    found = sorted((tool for tool in shown if tool.server == chosen), key=lambda t: t.name)
    return SearchResult(tuple(Hit(tool, 0.0) for tool in found), None)


def python_stubs(
    index: SearchIndex,
    found: SearchResult,
    *,
    servers: Container[str] | None = None,
    tools: Container[str] | None = None,
) -> str:
    """The found tools as Python stubs, named as in the module of every tool the caller sees.

    A function's name depends only on its own namespace's tools and on the set of
    namespaces, so the stubs are made among the found tools' namespaces' tools and one tool
    of every other namespace: the same names at a fraction of the cost.
    """
    lines: list[str] = []
    if found.hint:
        lines.append("# " + " ".join(found.hint.split()))
    if found.hits:
        wanted = {_namespace(hit.tool.name) for hit in found.hits} | {""}
        among: dict[str, MountedTool] = {}
        others: dict[str, MountedTool] = {}
        for tool in _visible(index.tools(), servers, tools):
            namespace = _namespace(tool.name)
            if namespace in wanted:
                among[tool.name] = tool
            else:
                others.setdefault(namespace, tool)
        among.update((tool.name, tool) for tool in others.values())
        shown = [hit.tool.to_mcp() for hit in found.hits]
        lines.append(stubs(shown, among=_definitions(among.values())).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _definitions(tools: Iterable[MountedTool]) -> Sequence[mcp_types.Tool]:
    # Only names count here: skip `to_mcp`'s copy of each definition.
    return [mcp_types.Tool(name=tool.name, input_schema={}) for tool in tools]


def _namespace(public: str) -> str:
    """The namespace the ``tools`` module files a public name under ("" for none)."""
    namespace, separator, _ = public.partition("__")
    return namespace if separator else ""


def _visible(
    every: Iterable[MountedTool], servers: Container[str] | None, tools: Container[str] | None
) -> list[MountedTool]:
    return [
        tool
        for tool in every
        if (servers is None or tool.server in servers) and (tools is None or tool.name in tools)
    ]


def _loose(namespace: str) -> str:
    """A namespace as its Python name reads it: ``my-fs`` and ``class_`` as ``my_fs`` and
    ``class``."""
    return namespace.replace("-", "_").rstrip("_").lower()


def _examples(namespaces: Sequence[str]) -> str:
    if not namespaces:
        return "(none are available)"
    named = ", ".join(f"'describe:{ns}'" for ns in namespaces[:_MAX_NAMED])
    return named + (", ..." if len(namespaces) > _MAX_NAMED else "")
