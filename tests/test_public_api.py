"""The package's public surface is curated: what is exported is deliberate."""

from __future__ import annotations

import ast
import importlib
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import mcpmount
import mcpmount.config

PACKAGE = Path(mcpmount.__file__).parent

FLOORS = {
    "errors": 0,
    "naming": 0,
    "tool": 0,
    "handlers": 0,
    "configfile": 1,
    "config": 1,
    "policy": 1,
    "auth": 2,
    "redis": 1,
    "sandbox": 1,
    "processes": 1,
    "semantic": 1,
    "search": 2,
    "codemode": 2,
    "observers": 2,
    "transports": 2,
    "catalog": 2,
    "hosts": 2,
    "audit": 2,
    "upstream": 3,
    "listing": 3,
    "manifests": 3,
    "gates": 4,
    "registry": 4,
    "adapters": 5,
    "serve": 5,
    "cli": 6,
}
"""Each room's floor: a room imports only from its own floor or below (docs/development.md)."""

MODULES = sorted(f"mcpmount.{room}" for room in FLOORS)


def _imports(path: Path) -> list[str]:
    """The ``mcpmount.*`` modules a source file imports (at run time or for type checking)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name.startswith("mcpmount.")]


def _room(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0] if parts[0] in FLOORS else None


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if _room(p) is not None)


def test_every_room_has_a_floor() -> None:
    """A new package or module must be placed on a floor (and in docs/development.md)."""
    rooms = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
    }
    rooms -= {"__init__", "__main__"}
    assert rooms == set(FLOORS)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_runs_upward_or_into_another_rooms_private_module(path: Path) -> None:
    """Floors draw the data flow; a room's private modules are its own."""
    room = _room(path)
    assert room is not None
    for name in _imports(path):
        parts = name.split(".")
        other = parts[1]
        if other not in FLOORS:
            continue  # a name imported from the package itself
        assert FLOORS[other] <= FLOORS[room], f"{room} (floor {FLOORS[room]}) imports {name}"
        if other != room:
            assert not any(part.startswith("_") for part in parts[2:3]), (
                f"{room} reaches into {name}; import it from mcpmount.{other}"
            )


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_FILES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported_files(path: Path) -> set[str]:
    """The package's modules (files) that ``path`` imports, wherever the import stands.

    ``from a.b import c`` imports the module ``a.b.c`` if there is one, else ``a.b``
    (its ``__init__``); the parent packages Python runs first are not counted, or every
    module would import ``mcpmount/__init__.py``.
    """
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, `level - 1` packages up
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULE_FILES else base)
    return {name for name in found if name in MODULE_FILES and name != me}


def test_no_import_circle_between_files() -> None:
    """No file imports, directly or through others, a file that imports it.

    Every import counts, wherever it stands: at module level, under ``if TYPE_CHECKING:``
    (an annotation still makes each file need the other to be read) and inside a function
    (deferring an import hides a circle from Python, not from a reader). A file that needs
    only part of another's interface takes a small ``Protocol`` instead.
    """
    graph = {name: _imported_files(path) for name, path in MODULE_FILES.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        cycle: list[str] = exc.args[1]
        pytest.fail("import circle (each imports the next): " + " -> ".join(reversed(cycle)))


def test_the_package_exports_exactly_its_sorted_all() -> None:
    """`__all__` is sorted, and every name in it exists."""
    assert mcpmount.__all__ == sorted(mcpmount.__all__)
    for name in mcpmount.__all__:
        assert hasattr(mcpmount, name), name


def test_the_public_names_are_the_documented_ones() -> None:
    """Adding or removing a public name is a decision, so this test must change with it."""
    assert set(mcpmount.__all__) == {
        "CallError",
        "ClientKey",
        "Closer",
        "ConfigError",
        "HttpServer",
        "MountError",
        "MountedTool",
        "Registry",
        "RegistryChange",
        "RegistryConfig",
        "RegistryError",
        "RegistrySettings",
        "ReloadResult",
        "SearchResult",
        "ServerError",
        "ServerState",
        "ServerStatus",
        "StdioServer",
        "ToolOverride",
        "UnknownToolError",
        "View",
        "__version__",
        "errors",
        "load_config",
        "open_registry",
    }


@pytest.mark.parametrize("module_name", MODULES)
def test_every_module_declares_all_and_it_resolves(module_name: str) -> None:
    """Each module says what it exports, and each exported name exists."""
    module = importlib.import_module(module_name)
    exported: list[str] = module.__all__
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name}"


CONFIG_MODULES = sorted(
    [*Path(mcpmount.config.__file__).parent.rglob("*.py"), *(PACKAGE / "configfile").glob("*.py")]
)


@pytest.mark.parametrize("path", CONFIG_MODULES, ids=lambda path: path.name)
def test_config_does_not_import_the_sdk(path: Path) -> None:
    """The config is pure data, so `mcpmount check` can validate without the SDK's weight."""
    tree = ast.parse(path.read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "mcp" not in imported
    assert "mcp_types" not in imported


SERVE = PACKAGE / "serve"

SERVE_ROOMS = {
    "access": 0,
    "relay": 1,
    "sessions": 2,
    "tasks": 3,
    "quotas": 3,
    "credentials": 3,
    "front": 4,
    "calllog": 5,
    "replicas": 5,
    "ops": 6,
    "hosting": 7,
}
"""The rooms of ``serve`` in the order a request passes them, bottom up: access (who is
asking, what it may see), the relay (what servers ask, to the asking request's client), the
sessions (each session's principal, and what it is told unasked), tasks (the servers' tasks
under principal-bound ids), quotas (rate limits past the gate) and credentials (each
principal's own upstream logins), the front (MCP), replica
state (on the sessions' events), ops (health, readiness, metrics, and who reads them),
hosting (transports, the lifecycle). A room imports only rooms below it."""


@pytest.mark.parametrize(
    "path",
    sorted(p for p in SERVE.rglob("*.py") if p.parent != SERVE),
    ids=lambda p: str(p.relative_to(SERVE)),
)
def test_serve_rooms_import_only_rooms_below_and_never_their_private_modules(path: Path) -> None:
    """transport → access → front → registry, readable from the tree."""
    room = path.relative_to(SERVE).parts[0]
    assert room in SERVE_ROOMS, f"serve/{room} is a room without a place in SERVE_ROOMS"
    for name in _imports(path):
        parts = name.split(".")
        if parts[:2] != ["mcpmount", "serve"] or len(parts) < 3 or parts[2] not in SERVE_ROOMS:
            continue
        other = parts[2]
        if other == room:
            continue
        assert SERVE_ROOMS[other] < SERVE_ROOMS[room], f"serve/{room} imports {name}"
        assert not any(part.startswith("_") for part in parts[3:4]), (
            f"serve/{room} reaches into {name}; import it from mcpmount.serve.{other}"
        )


def test_a_renamed_public_name_still_resolves_with_a_warning() -> None:
    """`mcpmount.config.Asker` became `InputPrompt`; code that imports the old name runs on."""
    with pytest.warns(DeprecationWarning, match="InputPrompt"):
        old = mcpmount.config.Asker  # pyright: ignore[reportAttributeAccessIssue]
    assert old is mcpmount.config.InputPrompt
    assert "Asker" not in mcpmount.config.__all__
    with pytest.raises(AttributeError):
        _ = mcpmount.config.NoSuchName  # pyright: ignore[reportAttributeAccessIssue]


def test_the_ops_listener_is_renamed_endpoint_and_still_resolves() -> None:
    """`mcpmount.serve.ops.Listener` became `Endpoint` ("listener" is a change callback)."""
    import mcpmount.serve.ops as ops

    with pytest.warns(DeprecationWarning, match="Endpoint"):
        old = ops.Listener  # pyright: ignore[reportAttributeAccessIssue]
    assert old is ops.Endpoint
    assert "Listener" not in ops.__all__
