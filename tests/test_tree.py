"""The tree itself: nothing a merge left behind, nothing imported that is not declared,
every error in one place."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pkgutil
import re
import sys
import tomllib
from pathlib import Path

import mcpmount
from mcpmount import errors

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


ELSEWHERE = {
    "mcpmount.audit._hidden.KeysCollide": "private: the cleaner's signal, caught in audit",
    "mcpmount.codemode._child.ToolError": (
        "raised inside code mode's sandbox, by a program that imports nothing of mcpmount"
    ),
    "mcpmount.cli._exit.UsageError": "private: the command line's, told as exit code 2",
    "mcpmount.sandbox._addresses.Refused": "private: one refused connection, the proxy's answer",
    "mcpmount.semantic._int8_graph.Int8GraphError": (
        "private: caught by the embedder, which then runs the graph as shipped"
    ),
    "mcpmount.transports._headers_command.HeadersCommandError": (
        "private: the transport tells it as the server's failure, in its words"
    ),
    "mcpmount.transports._http_metering.MessageRefused": (
        "an httpx2.StreamError, so that the SDK's HTTP client ends the stream; "
        "mcpmount.errors imports no HTTP client"
    ),
}
"""Exception classes defined outside ``mcpmount.errors``, each with the reason it stays there."""


def test_every_exception_class_lives_in_errors() -> None:
    """``mcpmount.errors`` holds every error mcpmount raises, so a reader finds them in one
    place: a new exception class goes there (re-exported by its room), or here with its reason.

    Each is public there and named by it (its ``__module__``), whichever of the package's
    private modules holds its code.
    """
    found: set[str] = set()
    for info in pkgutil.walk_packages(mcpmount.__path__, "mcpmount."):
        if info.name == "mcpmount.__main__":
            continue  # running it runs the command line
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found.add(f"{info.name}.{value.__qualname__}")
    in_errors = {name for name in found if name.startswith("mcpmount.errors.")}
    assert len(in_errors) > 20  # the walk saw the tree
    assert "mcpmount.errors.SemanticModelError" in in_errors  # and the optional rooms
    public = {
        f"mcpmount.errors.{name}"
        for name in errors.__all__
        if isinstance(getattr(errors, name), type)
    }
    assert sorted(in_errors) == sorted(public), (
        "an exception class of mcpmount.errors that is not in its __all__, or not named "
        "mcpmount.errors.<Name>: export it there"
    )
    assert sorted(found - in_errors) == sorted(ELSEWHERE), (
        "an exception class outside src/mcpmount/errors/: move it there (re-export it from "
        "its room) or list it in ELSEWHERE with the reason it stays"
    )
