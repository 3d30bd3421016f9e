"""The maps of the source stay true: docs/development.md's layout table names every module
once, and a package's docstring names only modules that exist.

The table is generated (``python docs/hooks/reference.py``); these tests read the
committed page and the tree themselves, so that they also fail if the generator skips a
module. That the committed table is what the generator writes now is
`test_committed`'s.
"""

from __future__ import annotations

import ast
import re
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
