"""The test harness itself: each support module imported under one name, each helper
written once.

A module imported under two names (``serve_support`` and ``serve.serve_support``) is two
module objects in one run: two copies of its state and classes an ``isinstance`` tells
apart. ``pyproject.toml`` puts ``tests/`` on the path, so a module at the top of ``tests/``
is imported by its name (``support``) and one in a room by its room's name too
(``serve.serve_support``) from anywhere; a room's own tests may import a module no other
room imports by its bare name, as pytest puts the room's folder on the path.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import cast

TESTS = Path(__file__).resolve().parent
SKIP = {"node_modules", "__pycache__"}


@functools.cache
def _sources() -> tuple[Path, ...]:
    """Every Python file under ``tests/`` but installed packages (walked, not globbed, so
    that node_modules is never entered)."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(TESTS):
        subfolders[:] = [name for name in subfolders if name not in SKIP]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return tuple(sorted(found))


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _module_file(name: str, importer: Path) -> Path | None:
    """The file under ``tests/`` that ``import name`` in ``importer`` loads, if any: from
    ``tests/`` (also spelled ``tests.``), from the importer's folder, or, for a bare name,
    from the room that pytest put on the path."""
    parts = name.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    if not parts:
        return None
    for base in (TESTS, importer.parent):
        candidate = base.joinpath(*parts).with_suffix(".py")
        if candidate.is_file():
            return candidate
    if len(parts) == 1:
        rooms = [path for path in _sources() if path.stem == parts[0]]
        if len(rooms) == 1:
            return rooms[0]
    return None


def _names_of_modules() -> dict[Path, dict[str, set[str]]]:
    """Each module under ``tests/`` that another imports: the names it is imported by, and
    for each name the files that use it."""
    found: dict[Path, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in _sources():
        where = str(path.relative_to(TESTS))
        for node in ast.walk(_tree(path)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
                names += [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                module = _module_file(name, path)
                if module is not None and module != path:
                    found[module][name.removeprefix("tests.")].add(where)
    return found


def test_each_test_module_is_imported_under_one_name() -> None:
    found = _names_of_modules()
    assert TESTS / "support.py" in found  # the walk saw the imports
    assert TESTS / "serve" / "serve_support.py" in found
    twice = {
        str(module.relative_to(TESTS)): {name: sorted(users) for name, users in names.items()}
        for module, names in found.items()
        if len(names) > 1
    }
    assert twice == {}, (
        "a test module imported under two names is two module objects: import a room's "
        "module as `room.module` wherever another room imports it"
    )


def test_no_module_is_imported_with_the_tests_prefix() -> None:
    """``tests.`` works only from the repository's root; ``tests/`` is on the path."""
    prefixed = sorted(
        f"{path.relative_to(TESTS)}: {line.strip()}"
        for path in _sources()
        for line in path.read_text().splitlines()
        if re.match(r"\s*(from|import) tests\.", line)
    )
    assert prefixed == []


HOMES = {
    "counted_fixture": "support.py",
    "fixture_server": "support.py",
    "free_port": "support.py",
    "port_written": "support.py",
    "portfile_process": "support.py",
    "script_server": "support.py",
    "served_http": "serve/serve_support.py",
    "spawn_count": "support.py",
    "write_config": "support.py",
}
"""Helpers once copied from room to room, and the one module that defines each now."""


SHARED = ("support.py", "leaks.py", "proc_table.py")
"""The harness at the top of ``tests/``: each of its public functions is a helper of every
room, written there once."""


def _homes() -> dict[str, str]:
    """`HOMES`, and each public function of the `SHARED` modules with its module."""
    homes = dict(HOMES)
    for name in SHARED:
        for node in _tree(TESTS / name).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name[0] != "_":
                homes[node.name] = name
    return homes


def test_each_shared_helper_is_defined_in_its_home_only() -> None:
    """Programs apart from the suite (`NOT_SUPPORT`: servers, benchmarks) may have their own."""
    homes = _homes()
    defined: dict[str, list[str]] = defaultdict(list)
    for path in _sources():
        where = str(path.relative_to(TESTS))
        if any(where.startswith(folder + "/") for folder in NOT_SUPPORT):
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name = node.name.lstrip("_")
                if name in homes:
                    defined[name].append(where)
    assert {name: sorted(set(where)) for name, where in defined.items()} == {
        name: [home] for name, home in homes.items()
    }, "a shared helper of the tests written again: import it from its home instead"


def _imported_here(tree: ast.Module) -> set[str]:
    """The names a module's top level binds by importing them."""
    return {
        alias.asname or alias.name.partition(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def _passed_on_attributes(path: Path, tree: ast.Module) -> list[str]:
    """Where ``tree`` reads a name off a test module it imported (``serving.fixture_server``
    after ``from serve import serve_support as serving``) that the module only imports."""
    bound: dict[str, Path] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
            for alias in node.names:
                name = alias.name
                if isinstance(node, ast.ImportFrom):
                    name = f"{node.module}.{alias.name}"
                module = _module_file(name, path)
                if module is not None and (
                    alias.asname or "." not in alias.name or name != alias.name
                ):
                    bound[alias.asname or alias.name] = module
    where = path.relative_to(TESTS)
    return [
        f"{where}:{read.lineno}: reads {read.attr} off {bound[read.value.id].relative_to(TESTS)}"
        for read in ast.walk(tree)
        if isinstance(read, ast.Attribute)
        and isinstance(read.value, ast.Name)
        and read.value.id in bound
        and read.attr in _imported_here(_tree(bound[read.value.id]))
    ]


def test_each_name_is_imported_from_the_module_that_defines_it() -> None:
    """A support module passing on a name it imports (``from support import free_port as
    free_port``, or importing it only for its tests) is a second home: tests import from
    both, and the compat name outlives the move. Import from where the name is written."""
    relayed: list[str] = []
    for path in _sources():
        where = str(path.relative_to(TESTS))
        tree = _tree(path)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                relayed += [
                    f"{where}: re-exports {alias.name} (as itself)"
                    for alias in node.names
                    if alias.asname == alias.name
                ]
                module = node.module and not node.level and _module_file(node.module, path)
                if module:
                    passed_on = _imported_here(_tree(module)) & {a.name for a in node.names}
                    relayed += [
                        f"{where}: imports {name} from {module.relative_to(TESTS)}, not its home"
                        for name in sorted(passed_on)
                    ]
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                listed = {n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant)}
                relayed += [
                    f"{where}: __all__ lists {name}, which it imports"
                    for name in sorted(_imported_here(tree) & cast("set[str]", listed))
                ]
        relayed += _passed_on_attributes(path, tree)
    assert relayed == []


LINES = 400
"""The most lines of a module the tests import, as of a module of src/."""

NOT_SUPPORT = {
    "bench": "benchmarks: programs run apart from the suite, sharing their own helpers",
    "servers": "MCP server programs the tests start, sharing their builders",
    "search_eval/eval_data.py": "data: the search evaluation's tools and queries, one table",
}
"""What other test modules import that is no test support, and why."""


def test_no_support_module_is_over_the_size_of_a_src_module() -> None:
    """A support module that grows past a src module's size holds several concepts: split it
    by concept, each part named uniquely across tests/ (``room_concept_support.py``)."""
    sizes = {
        str(module.relative_to(TESTS)): len(module.read_text().splitlines())
        for module in _names_of_modules()
    }
    assert "support.py" in sizes
    over = {
        where: lines
        for where, lines in sizes.items()
        if lines > LINES and not any(where.startswith(exempt) for exempt in NOT_SUPPORT)
    }
    assert over == {}
