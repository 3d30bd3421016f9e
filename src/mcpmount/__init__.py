"""mcpmount: mount many MCP servers into one namespaced tool registry.

>>> async with mcpmount.open_registry("servers.toml") as registry:  # doctest: +SKIP
...     tools = registry.tools()                   # what the model sees this turn
...     result = await registry.call("fs__read_file", {"path": "a.txt"})

Each name below is imported on first use (as pydantic does): ``import mcpmount`` alone
loads nothing of the SDK, so the command line's ``--help`` and a program that needs only
the config types do not pay for the registry.

Its rooms, bottom up (their floors and every module: docs/development.md): ``errors``,
``naming``, ``tool`` and ``handlers``; ``config`` (read by ``configfile``), ``policy``,
``redis``, ``sandbox``, ``processes`` and ``semantic``; ``auth``, ``search``,
``codemode``, ``observers``, ``transports``, ``catalog``, ``hosts`` and ``audit``;
``upstream``, ``listing`` and ``manifests``; ``gates`` and ``registry``; ``adapters`` and
``serve``; ``cli`` on top, run by ``__main__`` (``python -m mcpmount``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from mcpmount.upstream import ClientKey, ServerState

    __version__: str

_HOMES = {
    "HttpServer": "mcpmount.config",
    "RegistryConfig": "mcpmount.config",
    "RegistrySettings": "mcpmount.config",
    "StdioServer": "mcpmount.config",
    "ToolOverride": "mcpmount.config",
    "load_config": "mcpmount.config",
    "CallError": "mcpmount.errors",
    "ConfigError": "mcpmount.errors",
    "MountError": "mcpmount.errors",
    "RegistryError": "mcpmount.errors",
    "ServerError": "mcpmount.errors",
    "UnknownToolError": "mcpmount.errors",
    "Closer": "mcpmount.registry",
    "Registry": "mcpmount.registry",
    "RegistryChange": "mcpmount.registry",
    "ReloadResult": "mcpmount.registry",
    "ServerStatus": "mcpmount.registry",
    "View": "mcpmount.registry",
    "open_registry": "mcpmount.registry",
    "SearchResult": "mcpmount.search",
    "MountedTool": "mcpmount.tool",
    "ServerState": "mcpmount.upstream",
    "ClientKey": "mcpmount.upstream",
}
"""Where each public name lives: the module it is imported from on first use."""

__all__ = [
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
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, and keep it for the next."""
    if name == "__version__":
        from importlib.metadata import version

        value: Any = version("mcpmount")
    elif name == "errors":
        value = importlib.import_module("mcpmount.errors")
    elif (home := _HOMES.get(name)) is not None:
        value = getattr(importlib.import_module(home), name)
    else:
        raise AttributeError(f"module 'mcpmount' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
