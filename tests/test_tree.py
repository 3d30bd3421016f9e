"""The tree itself: nothing a merge left behind, nothing imported that is not declared."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
SKIP = {"node_modules", ".venv", ".git", "__pycache__", "site"}
SUFFIXES = {".py", ".md", ".toml", ".json", ".cfg", ".yaml", ".yml", ""}


def _texts() -> list[Path]:
    found = [ROOT / "README.md"]
    for top in ("src", "docs", "tests", "deploy", "configs", "conformance", ".ci"):
        for path in (ROOT / top).rglob("*"):
            parts = set(path.relative_to(ROOT).parts)
            if path.suffix in SUFFIXES and path.is_file() and not SKIP & parts:
                found.append(path)
    return found


def test_no_merge_conflict_markers() -> None:
    texts = _texts()
    assert len(texts) > 100  # the walk found the tree
    marked = [
        str(path.relative_to(ROOT))
        for path in texts
        if MARKER.search(path.read_text(errors="replace"))
    ]
    assert marked == [], f"merge conflict markers left in {marked}"


def _imported_tops() -> dict[str, str]:
    """Every top-level module ``src/`` imports (``import``, ``from``, and
    ``importlib.import_module("...")`` of a literal), with one file that imports it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _declared() -> set[str]:
    """The distributions pyproject.toml declares, in the package and its extras but dev."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    requirements = [*project["dependencies"]]
    for extra, listed in extras.items():
        if extra != "dev":
            requirements += listed
    return {_canonical(re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0]) for req in requirements}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_everything_src_imports_is_declared() -> None:
    """A module of a distribution that only a dependency of ours brings would break the
    day that dependency stops bringing it: each one ``src/`` imports is declared."""
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    tops = _imported_tops()
    assert {"mcp", "anyio", "jwt", "opentelemetry"} <= tops.keys()  # the walk saw imports
    undeclared = {
        top: where
        for top, where in tops.items()
        if top not in sys.stdlib_module_names
        and top not in ("mcpmount", "__future__")
        and not {_canonical(d) for d in distributions.get(top, [top])} & declared
    }
    assert undeclared == {}, f"imported by src/ but not declared in pyproject.toml: {undeclared}"
