"""What is mounted: the name table, its search index and manifest, and the lock file's pins."""

from mcpmount.catalog._catalog import Catalog, Listener, RegistryChange
from mcpmount.catalog._pins import LOCK_VERSION, Pins, ToolDiff, diff_tools, lock_path, tool_hash

__all__ = [
    "LOCK_VERSION",
    "Catalog",
    "Listener",
    "Pins",
    "RegistryChange",
    "ToolDiff",
    "diff_tools",
    "lock_path",
    "tool_hash",
]
