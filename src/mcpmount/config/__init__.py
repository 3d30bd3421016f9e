"""The config: which servers to mount and the registry's limits, as pure, strict data.

A config file is TOML::

    [registry]                  # optional; every key also settable as MCPMOUNT_<KEY>
    max_name_length = 64

    [servers.fs]                # the key is the namespace
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"]

    [servers.search]
    url = "https://search.example.com/mcp"
    headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }

or an MCP host's own file, read as that host means it (`HostFormat`): the
``{"mcpServers": {...}}`` JSON (Claude Desktop's config, Claude Code's ``.mcp.json``,
Cursor's and LM Studio's ``mcp.json``), VS Code's ``{"servers": {...}, "inputs": [...]}``,
Windsurf's and Gemini CLI's ``mcpServers``, Zed's ``context_servers``, OpenAI Codex's
``[mcp_servers.<name>]`` TOML, goose's ``extensions`` and Continue's ``mcpServers`` YAML,
with each host's variables.

This package never imports ``mcp`` and never starts anything, so ``mcpmount check`` can
validate a config without spawning a server. Every problem is reported at once, one line
each, naming the key; no line ever contains a value, because values may be secrets.

A file's text is read, and its variables expanded, by the room below
(`mcpmount.configfile`); this one makes of the tables it reads strict, frozen data. Its
modules, from the bottom up: ``_urls`` (`redacted_url`: every URL a message shows),
``_fields`` (checked field types), ``_code_mode`` (``[registry.code_mode]``),
``_settings`` (`RegistrySettings` and ``MCPMOUNT_*``),
``_effective`` (`EffectiveSettings`: a server's inherited keys, resolved),
``_override`` (per-tool overrides), ``_server`` (what every server declares), ``_oauth``
(a url server's OAuth), ``_http`` (the url kind), ``_secrecy`` (which of a server's
values are secret), ``_spec`` (the stdio kind and the union of kinds), ``_tables``
(tables to data), ``_sandbox`` (a stdio server's sandbox),
and ``_load`` (`load_config`; host files through the sub-room ``hostfiles``, the
``[serve]`` table through the sub-room ``servetable``). Beside them, ``_deprecation``
(`warn_deprecated`) tells an old form's warning at the user's own line, for this package
and the rooms above it.
"""

from mcpmount.config._code_mode import CodeModeSettings
from mcpmount.config._deprecation import warn_deprecated
from mcpmount.config._effective import EffectiveSettings
from mcpmount.config._fields import HeaderName, HeaderValue
from mcpmount.config._load import RegistryConfig, load_config
from mcpmount.config._oauth import TOKEN_KEY_ENV, OAuthSpec, token_key_problem
from mcpmount.config._override import ToolOverride
from mcpmount.config._sandbox import SandboxTable
from mcpmount.config._secrecy import CREDENTIAL_FORMATS, credential_name
from mcpmount.config._settings import LIMIT_KEYS, RegistrySettings
from mcpmount.config._spec import HttpServer, ServerBase, ServerSpec, StdioServer
from mcpmount.config._urls import redacted_url
from mcpmount.config.hostfiles import HostFormat
from mcpmount.config.servetable import (
    CALL_LOG_SINKS,
    MIN_TOKEN_LENGTH,
    LimitRule,
    ServeLimits,
    ServeOAuth,
    ServeSettings,
    ServeToken,
    Transport,
)
from mcpmount.configfile import (
    HostInput,
    InputPrompt,
    input_variable,
    load_json,
    needed_variables,
    strip_jsonc,
)

__all__ = [
    "CALL_LOG_SINKS",
    "CREDENTIAL_FORMATS",
    "LIMIT_KEYS",
    "MIN_TOKEN_LENGTH",
    "TOKEN_KEY_ENV",
    "CodeModeSettings",
    "EffectiveSettings",
    "HeaderName",
    "HeaderValue",
    "HostFormat",
    "HostInput",
    "HttpServer",
    "InputPrompt",
    "LimitRule",
    "OAuthSpec",
    "RegistryConfig",
    "RegistrySettings",
    "SandboxTable",
    "ServeLimits",
    "ServeOAuth",
    "ServeSettings",
    "ServeToken",
    "ServerBase",
    "ServerSpec",
    "StdioServer",
    "ToolOverride",
    "Transport",
    "credential_name",
    "input_variable",
    "load_config",
    "load_json",
    "needed_variables",
    "redacted_url",
    "strip_jsonc",
    "token_key_problem",
    "warn_deprecated",
]


def __getattr__(name: str) -> object:
    """Old names still resolve, with a warning, so that code written against them runs on.

    `Asker` became `InputPrompt`: "asker" is who asks (`mcpmount.handlers.Asker`).
    """
    if name == "Asker":
        warn_deprecated("mcpmount.config.Asker is renamed InputPrompt; import that instead")
        return InputPrompt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
