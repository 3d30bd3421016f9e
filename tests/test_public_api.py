"""The package's public surface is curated: what is exported is deliberate."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import mcpmount
import mcpmount.config

MODULES = [
    "mcpmount.config",
    "mcpmount.errors",
    "mcpmount.naming",
    "mcpmount.registry",
    "mcpmount.search",
    "mcpmount.tool",
    "mcpmount.transports",
    "mcpmount.upstream",
]


def test_the_package_exports_exactly_its_sorted_all() -> None:
    """`__all__` is sorted, and every name in it exists."""
    assert mcpmount.__all__ == sorted(mcpmount.__all__)
    for name in mcpmount.__all__:
        assert hasattr(mcpmount, name), name


def test_the_public_names_are_the_documented_ones() -> None:
    """Adding or removing a public name is a decision, so this test must change with it."""
    assert set(mcpmount.__all__) == {
        "CallError",
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
        "SearchResult",
        "ServerError",
        "ServerState",
        "ServerStatus",
        "StdioServer",
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


CONFIG_MODULES = sorted(Path(mcpmount.config.__file__).parent.glob("*.py"))


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
