"""Mounted tools as typed Python functions: the sandbox's ``tools`` module and its stubs.

``tools_module`` writes the source of the module a code-mode program imports
(``from tools import github``): one class per namespace holding one keyword-only function
per tool, typed from the tool's schemas, documented from its descriptions, each calling
``_mcpmount_code.call`` with the tool's public name and only the arguments given.
``stubs`` writes the same signatures and docstrings without bodies: what a model reads.

Every name, description and schema comes from an untrusted server, and the source is
compiled and run, so nothing of it reaches the source unescaped: names become
identifiers (`mcpmount.codemode._names`), literals are ``ascii()`` reprs, types come only
from `type_text`, and descriptions go into docstrings with control and invisible
characters dropped, backslashes doubled and quotes that could close the string escaped.
The module imports only ``_mcpmount_code``: its annotations are never evaluated (``from
__future__ import annotations``), so even ``typing`` (7 ms or more to import, more than the
module itself for 50 tools) is not needed.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import mcp_types

from mcpmount.codemode._names import SEPARATOR, unique_identifiers
from mcpmount.codemode._schemas import literal_text, shape_text, type_text

__all__ = ["python_names", "stubs", "tools_module"]

_MODULE_NAMES: Final = frozenset({"Any", "Literal", "ToolError", "annotations"})
"""Names the generated module defines or its annotations name; no namespace or tool takes one."""

_MAX_DESCRIPTION: Final = 4000
_MAX_ARGUMENT_DESCRIPTION: Final = 600
"""Longer descriptions are cut, with a marker: a stub is read by a model, token by token."""

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
    "\ud800-\udfff\U000e0000-\U000e007f]"
)
"""Control characters (but tab and newline), invisible and bidi formatting, lone
surrogates and tag characters: nothing a reader should get from a description."""

_QUOTE = re.compile(r'"(?="|$)')
"""A quote another quote follows, or the text's last: escaped, three can never close."""


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    """The Python identifier."""
    key: str
    """The property name sent in the arguments."""
    annotation: str
    default: str | None
    """The default's source (``None`` for an optional one); None when required."""
    description: str


@dataclass(frozen=True, slots=True)
class _Function:
    name: str
    public: str
    namespace: str
    """As in the public name (``my-fs``), for the namespace's docstring."""
    params: tuple[_Param, ...]
    returns: str
    fields: str
    """The returned object's fields and types (``{'rows': list[Any]}``), or ""."""
    description: str


def python_names(tools: Sequence[mcp_types.Tool]) -> dict[str, tuple[str, str]]:
    """Map each public name to (namespace identifier, function identifier).

    The namespace is the part of the public name before the first ``__``; a name without
    one (a server mounted with ``prefix = false``) is a function of the module itself, and
    its namespace identifier is ``""``. Deterministic, and unique: names that read alike
    (``read-file``, ``read.file``) get stable suffixes (see `unique_identifiers`).
    """
    split = {tool.name: _split(tool.name) for tool in tools}
    namespaces = unique_identifiers(
        sorted({ns for ns, _ in split.values() if ns}), "ns", _MODULE_NAMES
    )
    top = unique_identifiers(
        sorted(raw for ns, raw in split.values() if not ns),
        "tool",
        _MODULE_NAMES | set(namespaces.values()),
    )
    members: dict[str, list[str]] = {}
    for ns, raw in split.values():
        if ns:
            members.setdefault(ns, []).append(raw)
    inner = {ns: unique_identifiers(sorted(raws), "tool") for ns, raws in members.items()}
    return {
        public: (namespaces[ns], inner[ns][raw]) if ns else ("", top[raw])
        for public, (ns, raw) in split.items()
    }


def tools_module(tools: Sequence[mcp_types.Tool]) -> str:
    """Return the source of the in-sandbox module ``tools`` (see the module docstring).

    Safe to compile and run for any tool list: no name, description or schema can add
    code. Calling a function sends only the arguments given; an optional one left at
    None is not sent.
    """
    groups = _groups(tools)
    exported = ["ToolError", *sorted(groups)]
    namespaces = ", ".join(ns for ns in sorted(groups) if ns) or "none"
    lines = [
        '"""The mounted tools as functions: ``from tools import <namespace>``.',
        "",
        "Each function calls its tool and returns its structured result (a dict) when it",
        "has one, else its text; an error result raises ToolError.",
        f"Namespaces: {namespaces}.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from _mcpmount_code import ToolError",
        "from _mcpmount_code import call as _code_call",
        "",
        f"__all__ = {sorted(set(exported) - {''}) + sorted(f.name for f in groups.get('', ()))}",
        "",
        "",
        "def _call(name: str, arguments: dict[str, Any], optional: tuple[str, ...]) -> Any:",
        "    sent = {k: v for k, v in arguments.items() if v is not None or k not in optional}",
        "    return _code_call(name, sent)",
    ]
    for function in groups.get("", ()):
        lines += ["", "", *_function_lines(function, "", bodies=True)]
    lines += ["", "", "_SOURCES = {"]
    for namespace in sorted(ns for ns in groups if ns):
        source = "\n".join(_class_lines(namespace, groups[namespace], bodies=True)) + "\n"
        lines.append(f"    {namespace!a}: {source!a},")
    lines += ["}", *_LAZY]
    return "\n".join(lines) + "\n"


_LAZY: Final = (
    '"""Each namespace\'s source, compiled when first used: a program that uses one',
    "namespace of fifty does not wait for the other forty-nine to compile.",
    '"""',
    "",
    "",
    "def __getattr__(name: str) -> Any:",
    "    source = _SOURCES.get(name)",
    "    if source is None:",
    "        raise AttributeError(f\"module 'tools' has no attribute {name!r}\")",
    "    exec(compile(source, f'<tools.{name}>', 'exec'), globals())",
    "    return globals()[name]",
    "",
    "",
    "def __dir__() -> list[str]:",
    "    return sorted({*globals(), *_SOURCES})",
)


def stubs(tools: Sequence[mcp_types.Tool], *, among: Sequence[mcp_types.Tool] = ()) -> str:
    """Return the `.pyi`-style text of ``tools``: signatures and docstrings, no bodies,
    grouped by namespace (one class each). What a model reads to learn the functions.

    Args:
        tools: The tools to show.
        among: The tools the ``tools`` module is made of, when ``tools`` are a few of them
            (a search's hits): names are given among all of them, so that each function
            is shown under the name the module has (names that read alike are told apart
            only when both are there).
    """
    return "\n".join(_render(_groups(tools, among), bodies=False)).lstrip("\n") + "\n"


def _split(public: str) -> tuple[str, str]:
    namespace, separator, raw = public.partition(SEPARATOR)
    return (namespace, raw) if separator and namespace else ("", public)


def _groups(
    tools: Sequence[mcp_types.Tool], among: Sequence[mcp_types.Tool] = ()
) -> dict[str, list[_Function]]:
    """Namespace identifier ("" for the module's own) -> its functions, by name."""
    unique: dict[str, mcp_types.Tool] = {}
    for tool in tools:
        unique.setdefault(tool.name, tool)
    names = python_names([*unique.values(), *among])
    groups: dict[str, list[_Function]] = {}
    for tool in unique.values():
        namespace, name = names[tool.name]
        groups.setdefault(namespace, []).append(_function(tool, name))
    for functions in groups.values():
        functions.sort(key=lambda f: f.name)
    return groups


def _function(tool: mcp_types.Tool, name: str) -> _Function:
    schema = _mapping(tool.input_schema)
    properties = _mapping(schema.get("properties"))
    listed: object = schema.get("required")
    required = (
        {r for r in cast("list[object]", listed) if isinstance(r, str)}
        if isinstance(listed, list)
        else set[str]()
    )
    keys = list(properties) + sorted(required - set(properties))
    idents = unique_identifiers(keys, "arg")
    params: list[_Param] = []
    for key in keys:
        prop = _mapping(properties.get(key))
        annotation = type_text(prop, schema)
        if key in required:
            default = None
        else:
            default = literal_text(prop.get("default")) if "default" in prop else None
            if default is None or default == "None":
                default = "None"
                annotation = annotation if annotation == "Any" else _optional(annotation)
        described = prop.get("description")
        text = _clean(described, _MAX_ARGUMENT_DESCRIPTION) if isinstance(described, str) else ""
        shape, each = shape_text(prop, schema)
        if shape:
            text = f"{text} {'Each' if each else 'Fields'}: {shape}".lstrip()
        if idents[key] != key:
            text = f"(sent as {_clean(key, 80)!s}) {text}".rstrip()
        params.append(_Param(idents[key], key, annotation, default, text))
    params.sort(key=lambda p: p.default is not None)  # required first, each in schema order
    output = cast("object", tool.output_schema)
    returns = "Any" if output is None else type_text(output)
    description = _clean(tool.description or tool.title or "", _MAX_DESCRIPTION)
    namespace = _split(tool.name)[0]
    return _Function(
        name, tool.name, namespace, tuple(params), returns, shape_text(output)[0], description
    )


def _mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: schemas are untrusted."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _optional(annotation: str) -> str:
    return (
        annotation
        if annotation.endswith("| None") or annotation == "None"
        else f"{annotation} | None"
    )


def _render(groups: Mapping[str, list[_Function]], *, bodies: bool) -> list[str]:
    lines: list[str] = []
    for function in groups.get("", ()):
        lines += ["", "", *_function_lines(function, "", bodies=bodies)]
    for namespace in sorted(ns for ns in groups if ns):
        lines += ["", "", *_class_lines(namespace, groups[namespace], bodies=bodies)]
    return lines


def _class_lines(namespace: str, functions: list[_Function], *, bodies: bool) -> list[str]:
    listed = _clean(functions[0].namespace, 80)
    lines = [f"class {namespace}:", *_docstring(f"The tools of {listed}.", "    ")]
    for function in functions:
        lines += ["", *_function_lines(function, "    ", bodies=bodies)]
    return lines


def _function_lines(function: _Function, indent: str, *, bodies: bool) -> list[str]:
    params = [
        f"{p.name}: {p.annotation}" + ("" if p.default is None else f" = {p.default}")
        for p in function.params
    ]
    signature = f"*, {', '.join(params)}" if params else ""
    lines = [f"{indent}def {function.name}({signature}) -> {function.returns}:"]
    inner = indent + "    "
    documented = [p for p in function.params if p.description]
    text = function.description
    if documented:
        args = "\n".join(f"    {p.name}: {p.description}" for p in documented)
        text = f"{text}\n\nArgs:\n{args}".lstrip("\n")
    if function.fields:
        text = f"{text}\n\nReturns: {function.fields}".lstrip("\n")
    if text:
        lines += _docstring(text, inner)
    if bodies:
        arguments = ", ".join(f"{p.key!a}: {p.name}" for p in function.params)
        left_out = [f"{p.key!a}" for p in function.params if p.default is not None]
        optional = ", ".join(left_out) + ("," if len(left_out) == 1 else "")
        lines.append(f"{inner}return _call({function.public!a}, {{{arguments}}}, ({optional}))")
    elif not text:
        lines.append(f"{inner}...")
    return lines


def _docstring(text: str, indent: str) -> list[str]:
    """``text`` as a docstring at ``indent``; ``text`` is already `_clean`."""
    escaped = _QUOTE.sub('\\\\"', text.replace("\\", "\\\\"))
    body = escaped.split("\n")
    if len(body) == 1:
        return [f'{indent}"""{body[0]}"""']
    return [
        f'{indent}"""{body[0]}',
        *(f"{indent}{line}".rstrip() for line in body[1:]),
        f'{indent}"""',
    ]


def _clean(text: str, limit: int) -> str:
    """Untrusted text as plain lines: unsafe characters dropped, bounded in length."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n")
    text = _UNSAFE.sub("", text.replace("\t", "    ").replace("\u2029", "\n")).strip()
    text = inspect.cleandoc(text)  # a description copied from a docstring keeps its indent
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."
