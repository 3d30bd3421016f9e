"""The maps of the source stay true: docs/development.md's layout table names every module
once, a package's docstring names each of its modules and only modules that exist, and a
dotted `mcpmount.room.Name` in any docstring imports.

The table is generated (``python docs/hooks/reference.py``); these tests read the
committed page and the tree themselves, so that they also fail if the generator skips a
module. That the committed table is what the generator writes now is
`test_committed`'s.
"""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from collections import Counter
from pathlib import Path

from docs_support import ROOT

PACKAGE = ROOT / "src" / "mcpmount"
PAGE = ROOT / "docs" / "development.md"
REGENERATE = "run `python docs/hooks/reference.py` and commit docs/development.md"
_TABLE = re.compile(
    r"^<!-- reference: layout -->\n(?P<body>.*?)^<!-- end: reference -->$", re.M | re.S
)
_ROW = re.compile(r"^\|[^|]*\| `(?P<module>[^`]+)` \|", re.M)
_NAMED = re.compile(r"``((?:\w+\.)*_[a-z]\w*)``")


def _shown(path: Path) -> str:
    """How the table names a module: its path under ``src/mcpmount`` (a package: ``x/``)."""
    if path == PACKAGE / "__init__.py":
        return "mcpmount"
    if path.name == "__init__.py":
        return f"{path.parent.relative_to(PACKAGE)}/"
    return str(path.relative_to(PACKAGE))


def _table_rows() -> list[str]:
    found = _TABLE.search(PAGE.read_text())
    assert found is not None, f"docs/development.md lost its layout region; {REGENERATE}"
    return _ROW.findall(found["body"])


def test_the_layout_table_names_every_module_once() -> None:
    rows = _table_rows()
    modules = {_shown(path) for path in PACKAGE.rglob("*.py")}
    assert len(modules) > 200  # the walk found the package
    missing = sorted(modules - set(rows))
    gone = sorted(set(rows) - modules)
    twice = sorted(name for name, count in Counter(rows).items() if count > 1)
    assert missing == [], f"modules without a row in the layout table: {missing}; {REGENERATE}"
    assert gone == [], f"rows of modules that no longer exist: {gone}; {REGENERATE}"
    assert twice == [], f"modules with two rows: {twice}"


def _resolves(named: str, package: Path) -> bool:
    """Whether ``named`` (``_mod``, or ``room._mod`` from the package root) is a module
    of ``package``, of a package around it, or of ``mcpmount``."""
    parts = named.split(".")
    for base in [package, *package.parents]:
        if not base.is_relative_to(PACKAGE):
            break
        target = base.joinpath(*parts)
        if target.with_suffix(".py").is_file() or (target / "__init__.py").is_file():
            return True
    return False


def test_package_docstrings_name_only_modules_that_exist() -> None:
    """A package's docstring says how its modules work together; when one moves or goes,
    the docstring must follow (``configfile._variables`` was once ``config._variables``)."""
    inits = sorted(PACKAGE.rglob("__init__.py"))
    stale: list[str] = []
    named_any = 0
    for init in inits:
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        for named in _NAMED.findall(doc):
            named_any += 1
            if not _resolves(named, init.parent):
                stale.append(f"{init.relative_to(ROOT)}: ``{named}``")
    assert named_any > 50  # the docstrings do name modules
    assert stale == [], f"package docstrings name modules that do not exist: {stale}"


def test_every_test_room_is_named_in_the_development_guide() -> None:
    """docs/development.md says where each room's tests are: a new room is named there."""
    text = PAGE.read_text()
    rooms = sorted({path.parent.name for path in (ROOT / "tests").glob("*/test_*.py")})
    assert len(rooms) > 20  # the walk found the rooms
    unnamed = [room for room in rooms if f"`tests/{room}/`" not in text]
    assert unnamed == [], f"test rooms docs/development.md does not name: {unnamed}"


BEING_SPLIT: dict[str, str] = {}
"""Packages whose docstrings may leave out some of their modules for now, with why."""


def _own_modules(package: Path) -> list[str]:
    """The names of a package's own modules and sub-packages (not theirs)."""
    files = [path.stem for path in package.glob("*.py") if path.name != "__init__.py"]
    subs = [path.name for path in package.iterdir() if (path / "__init__.py").is_file()]
    return sorted(files + subs)


def test_every_package_docstring_names_each_of_its_modules() -> None:
    """A package's docstring is the map of its room: each module it holds is named there
    at least once, in any form (``_catalog``, `mcpmount.catalog._catalog`), so a newcomer
    finds every module from the package it is in."""
    unnamed: list[str] = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        package = init.parent
        if str(package.relative_to(PACKAGE)) in BEING_SPLIT:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        unnamed += [
            f"{package.relative_to(ROOT)}: {name}"
            for name in _own_modules(package)
            if not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", doc)
        ]
    assert unnamed == [], f"package docstrings that do not name these modules: {unnamed}"


_DOTTED = re.compile(r"(?<!`)`(mcpmount(?:\.\w+)+)`(?!`)")
"""A reference to a name, in single backticks (double ones quote a literal, such as the
``mcpmount.server`` span attribute)."""

UNRESOLVED: dict[str, str] = {}
"""Dotted names that do not import yet, with why; each is to be fixed where it stands."""


def _imports(dotted: str) -> bool:
    """Whether ``dotted`` (``mcpmount.room.Name.attr``) is a module, or a name in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for part in parts[cut:]:
                if not hasattr(found, part):
                    return False
                found = getattr(found, part)
        return True
    return False


def _docstrings(path: Path) -> list[str]:
    """Every docstring of a source file: the module's, and each class's and function's."""
    tree = ast.parse(path.read_text())
    nodes = [tree, *(node for node in ast.walk(tree) if isinstance(node, _DOCUMENTED))]
    return [doc for node in nodes if (doc := ast.get_docstring(node))]


_DOCUMENTED = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def test_every_dotted_name_in_a_docstring_resolves() -> None:
    """A docstring that sends the reader to `mcpmount.room.Name` sends them somewhere:
    every such dotted name imports (a class named once that never existed did not)."""
    unresolved: list[str] = []
    named_any = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for doc in _docstrings(path):
            for dotted in _DOTTED.findall(doc):
                named_any += 1
                where = f"{path.relative_to(ROOT)}: {dotted}"
                if not _imports(dotted) and where not in UNRESOLVED:
                    unresolved.append(where)
    assert named_any > 50  # the docstrings do name things this way
    assert unresolved == [], f"dotted names in docstrings that do not import: {unresolved}"
