"""The sandbox's ``tools`` module: typed functions that send exactly their tool's call,
generated safely from any names, descriptions and schemas a server may send."""

from __future__ import annotations

import ast
import builtins
import itertools
import keyword
import pydoc
from typing import Any

import mcp_types
from codemode_stubs_support import hostile_texts, loaded, tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpmount.codemode import python_names, stubs, tools_module

GITHUB = [
    tool(
        "github__list-issues",
        {
            "repo": {"type": "string", "description": "owner/name"},
            "from": {"type": "integer", "description": "First issue number."},
            "state": {"enum": ["open", "closed"], "default": "open"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "since": {"$ref": "#/$defs/When"},
        },
        ["repo"],
        "List the issues of a repository.",
        **{"$defs": {"When": {"type": ["string", "null"]}}},
    ),
    tool("github__list_issues", {}, None, "The other one."),
    tool("fs__read.file", {"path": {"type": "string"}}, ["path"], "Read a file."),
    tool("plain", {"x": {"type": "number"}}),
]


def test_a_function_sends_its_tool_name_and_only_the_arguments_given() -> None:
    """``from_`` goes out as ``from``, an optional left at None is not sent, a schema
    default is, and the answer of the call is the function's result."""
    with loaded(tools_module(GITHUB)) as (module, recorder):
        imported: dict[str, Any] = {}
        exec("from tools import fs, github", imported)  # as a program imports them
        fs, github = imported["fs"], imported["github"]
        names = python_names(GITHUB)
        list_dashed = getattr(github, names["github__list-issues"][1])
        assert list_dashed(repo="a/b", from_=7) == "answered"
        list_dashed(repo="a/b", state="closed", labels=["bug"], since=None)
        github.list_issues()
        fs.read_file(path="/x")
        module.plain(x=1.5)
        module.plain()
        assert recorder.calls == [
            ("github__list-issues", {"repo": "a/b", "from": 7, "state": "open"}),
            ("github__list-issues", {"repo": "a/b", "state": "closed", "labels": ["bug"]}),
            ("github__list_issues", {}),
            ("fs__read.file", {"path": "/x"}),
            ("plain", {"x": 1.5}),
            ("plain", {}),
        ]
        assert module.ToolError.__name__ == "RecordedToolError"
        assert set(module.__all__) == {"ToolError", "fs", "github", "plain"}
        assert "List the issues of a repository." in pydoc.render_doc(github)
        assert "fs, github" in (module.__doc__ or "")


def test_signatures_read_as_python_types() -> None:
    """Types come from the schema: required first and bare, optional ones ``= None`` or
    their default; a local ``$ref`` is followed."""
    text = stubs(GITHUB)
    assert (
        "def list_issues_"  # the dashed name clashes with the underscored one: suffixed
        in text
    )
    assert (
        "(*, repo: str, from_: int | None = None, state: Literal['open', 'closed'] = 'open', "
        "labels: list[str] | None = None, since: str | None = None) -> Any:"
    ) in text
    assert "    def read_file(*, path: str) -> Any:" in text
    assert "def plain(*, x: float | None = None) -> Any:" in text
    assert "from_: (sent as from) First issue number." in text
    assert "labels: Each: {" not in text  # strings have no fields to show
    entities = {"type": "array", "items": {"$ref": "#/$defs/Entity"}}
    entity = {"type": "object", "properties": {"name": {"type": "string"}}}
    defs: dict[str, Any] = {"$defs": {"Entity": entity}}
    shaped = tool("kg__add", {"entities": entities}, ["entities"], None, **defs)
    assert "entities: Each: {'name': str}" in stubs([shaped])
    output = mcp_types.Tool(
        name="db__query",
        input_schema={"type": "object"},
        output_schema={"type": "object", "properties": {"rows": {"type": "array"}}},
    )
    assert "def query() -> dict[str, Any]:" in stubs([output])


def test_stubs_of_a_few_tools_name_them_as_the_module_of_all_does() -> None:
    """A search's hits are shown under the names the ``tools`` module gives them, even when
    a tool that reads alike is not among the hits."""
    found = [tool("ns__read-file")]
    every = [*found, tool("ns__read_file")]
    name = python_names(every)["ns__read-file"][1]
    assert name.startswith("read_file_")
    assert f"def {name}()" in stubs(found, among=every)
    assert "def read_file()" in stubs(found)  # alone, it needs no suffix


def test_python_names_are_identifiers_unique_and_independent_of_order() -> None:
    """Names that read alike get stable suffixes; keywords a trailing ``_``; order does not
    change any name."""
    raw = ["read-file", "read.file", "read_file", "class", "class_", "2fa", "_x", "x"]
    tools = [tool(f"ns__{name}") for name in raw] + [tool("my-fs__a"), tool("my_fs__a")]
    first = python_names(tools)
    for order in itertools.islice(itertools.permutations(tools), 50):
        assert python_names(list(order)) == first
    assert first["ns__read_file"] == ("ns", "read_file")
    assert first["ns__class"][1].startswith("class__")  # "class_" is another tool's
    assert first["ns__class_"] == ("ns", "class_")
    assert first["ns__2fa"] == ("ns", "tool_2fa")
    by_namespace: dict[str, list[str]] = {}
    for namespace, function in first.values():
        assert function.isidentifier()
        assert not keyword.iskeyword(function)
        assert not function.startswith("_")
        by_namespace.setdefault(namespace, []).append(function)
    for functions in by_namespace.values():
        assert len(functions) == len(set(functions))
    assert first["my-fs__a"][0] != first["my_fs__a"][0]


Schema = dict[str, Any]
TEXT = st.one_of(st.sampled_from(hostile_texts()), st.text(max_size=12))
KINDS = ["string", "integer", "number", "boolean", "null", "array", "object"]


def _one(key: str) -> Any:
    """A strategy builder: ``value -> {key: value}``."""

    def build(value: object) -> Schema:
        return {key: value}

    return build


def _described(text: str, schema: Schema) -> Schema:
    return {**schema, "description": text}


def _array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def _map(extra: Schema) -> Schema:
    return {"type": "object", "additionalProperties": extra}


def _extend(inner: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    return st.one_of(
        st.builds(_array, inner),
        st.builds(_one("anyOf"), st.lists(inner, max_size=3)),
        st.builds(_map, inner),
        st.builds(_one("properties"), st.dictionaries(TEXT, inner, max_size=3)),
        st.builds(_described, TEXT, inner),
    )


SCHEMA: st.SearchStrategy[Schema] = st.recursive(
    st.one_of(
        st.builds(_one("type"), st.sampled_from(KINDS)),
        st.builds(_one("enum"), st.lists(st.one_of(TEXT, st.integers()))),
        st.builds(_one("$ref"), st.one_of(TEXT, st.just("#/$defs/loop"))),
        st.builds(_one("const"), st.one_of(TEXT, st.floats())),
        st.builds(_one("default"), st.one_of(TEXT, st.floats(), st.none())),
    ),
    _extend,
    max_leaves=6,
)


def _tool(
    namespace: str, name: str, description: str, properties: dict[str, Schema], required: list[str]
) -> mcp_types.Tool:
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "$defs": {"loop": {"$ref": "#/$defs/loop"}},
    }
    public = f"{namespace}__{name}" if namespace else name
    return mcp_types.Tool(name=public, description=description, input_schema=schema)


TOOL = st.builds(
    _tool,
    st.sampled_from(["", "gh", "my-fs", "my_fs", "class"]),
    TEXT,
    TEXT,
    st.dictionaries(TEXT, SCHEMA, max_size=4),
    st.lists(TEXT, max_size=3),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TOOL, max_size=6))
def test_no_name_description_or_schema_adds_code(tools: list[mcp_types.Tool]) -> None:
    """Whatever the server sends, the module holds only its classes and functions, each
    function only a docstring and its call, and every call sends the tool's own name and
    argument names; the stubs hold only signatures and docstrings."""
    source = tools_module(tools)
    _assert_only_definitions(_definitions(source), bodies=True)
    _assert_only_definitions(ast.parse(stubs(tools)).body, bodies=False)
    with loaded(source) as (module, recorder):
        assert not hasattr(builtins, "PWNED")
        names = python_names(tools)
        for public, (namespace, function) in names.items():
            owner = getattr(module, namespace) if namespace else module
            sent = dict.fromkeys(_parameters(getattr(owner, function)), 0)
            getattr(owner, function)(**sent)
            name, arguments = recorder.calls[-1]
            assert name == public
            listed = next(t for t in tools if t.name == public).input_schema
            expected = set(listed["properties"]) | {
                r for r in listed["required"] if isinstance(r, str)
            }
            assert set(arguments) == expected


def test_hostile_descriptions_come_out_as_their_text_and_no_more() -> None:
    """A docstring shows the description as text, breakout attempts included, with the
    invisible and control characters dropped."""
    tools = [
        tool(f"ns__t{i}", {"a": {"type": "string", "description": text}}, None, text)
        for i, text in enumerate(hostile_texts())
    ]
    with loaded(tools_module(tools)) as (module, _):
        assert not hasattr(builtins, "PWNED")
        breakout = pydoc.getdoc(module.ns.t0)
        assert breakout.startswith('"""\nimport builtins; builtins.PWNED = True\n"""')
        assert pydoc.getdoc(module.ns.t6).startswith("ends in a backslash\\")
        shown = pydoc.render_doc(module.ns)
        for hidden in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200b", "\U000e0041"):
            assert hidden not in shown


def _definitions(source: str) -> list[ast.stmt]:
    """The module's own functions and its namespaces' classes; every other statement is
    the same as in the module of no tools, but for ``__all__`` and ``_SOURCES``."""
    body = ast.parse(source).body
    fixed = ("_call", "__getattr__", "__dir__")
    own = [n for n in body if isinstance(n, ast.FunctionDef) and n.name not in fixed]
    rest = [n for n in body if n not in own]
    assigned = {_assigned(n): n for n in rest if isinstance(n, ast.Assign) and _assigned(n)}
    empty = ast.parse(tools_module([])).body
    assert [ast.dump(n) for n in rest[1:] if not _assigned(n)] == [
        ast.dump(n) for n in empty[1:] if not _assigned(n)
    ]
    assert set(assigned) == {"__all__", "_SOURCES"}
    exported = assigned["__all__"].value
    assert isinstance(exported, ast.List)
    assert all(isinstance(name, ast.Constant) for name in exported.elts)
    sources = assigned["_SOURCES"].value
    assert isinstance(sources, ast.Dict)
    classes: list[ast.stmt] = []
    for key, value in zip(sources.keys, sources.values, strict=True):
        assert isinstance(key, ast.Constant)
        assert isinstance(value, ast.Constant)
        assert isinstance(value.value, str)
        (namespace,) = ast.parse(value.value).body
        assert isinstance(namespace, ast.ClassDef)
        assert namespace.name == key.value
        classes.append(namespace)
    return own + classes


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _parameters(function: Any) -> list[str]:
    code = function.__code__
    return list(code.co_varnames[: code.co_kwonlyargcount])


def _assert_only_definitions(nodes: list[ast.stmt], *, bodies: bool) -> None:
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            assert not node.decorator_list
            assert not node.bases
            assert _is_docstring(node.body[0])
            _assert_only_definitions(node.body[1:], bodies=bodies)
            continue
        assert isinstance(node, ast.FunctionDef), ast.dump(node)
        assert not node.decorator_list
        body = node.body[1:] if _is_docstring(node.body[0]) else node.body
        if bodies:
            assert len(body) == 1
            assert isinstance(body[0], ast.Return)
            call = body[0].value
            assert isinstance(call, ast.Call)
            assert isinstance(call.func, ast.Name)
            assert call.func.id == "_call"
        else:
            assert len(node.body) == 1
            assert _is_docstring(node.body[0]) or ast.unparse(node.body[0]) == "..."


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )
