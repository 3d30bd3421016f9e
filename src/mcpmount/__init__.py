"""mcpmount: mount many MCP servers into one namespaced tool registry.

>>> async with mcpmount.open_registry("servers.toml") as registry:  # doctest: +SKIP
...     tools = registry.tools()                   # what the model sees this turn
...     result = await registry.call("fs__read_file", {"path": "a.txt"})
"""

from importlib.metadata import version as _version

from mcpmount import errors
from mcpmount.config import (
    HttpServer,
    RegistryConfig,
    RegistrySettings,
    StdioServer,
    ToolOverride,
    load_config,
)
from mcpmount.errors import (
    CallError,
    ConfigError,
    MountError,
    RegistryError,
    ServerError,
    UnknownToolError,
)
from mcpmount.registry import (
    Closer,
    Registry,
    RegistryChange,
    ReloadResult,
    ServerStatus,
    View,
    open_registry,
)
from mcpmount.search import SearchResult
from mcpmount.tool import MountedTool
from mcpmount.upstream import ServerState

__version__ = _version("mcpmount")

__all__ = [
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
]
