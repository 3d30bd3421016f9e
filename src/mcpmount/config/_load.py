"""The whole config: `RegistryConfig`, loaded from a file by `load_config` or built in code."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from mcpmount.config._deprecation import warn_deprecated
from mcpmount.config._settings import RegistrySettings, build_settings
from mcpmount.config._spec import KINDS, ServerSpec
from mcpmount.config._tables import Tables
from mcpmount.config.hostfiles import FORMATS_READ, HostFormat, read_host_file, sniff_format
from mcpmount.config.servetable import ServeSettings, read_serve, serve_given
from mcpmount.configfile import InputPrompt, Table, line, read_syntax, unknown_key, workspace_of
from mcpmount.errors import ConfigError
from mcpmount.naming import namespace_problem

logger = logging.getLogger(__name__)

WAIT_MOVED = (
    "moved to [serve] first_list_wait, where serve's settings are; move it "
    "(for a host's file, which has no [serve]: mcpmount serve --first-list-wait)"
)
"""What a config that still sets ``[registry] first_list_wait`` is told."""


@dataclass(frozen=True, slots=True)
class RegistryConfig:
    """A validated config: the registry settings and the servers to mount."""

    settings: RegistrySettings
    """Defaults and limits for the whole registry."""

    servers: Mapping[str, ServerSpec]
    """Namespace to server, in file order (read-only)."""

    path: Path | None = None
    """The absolute path of the file it was loaded from; None when built in code."""

    serve: ServeSettings = field(default_factory=ServeSettings)
    """Who may use HTTP ``mcpmount serve`` (the ``[serve]`` table)."""

    notes: tuple[str, ...] = ()
    """What loading noticed that is no problem, one line each: a server a host file
    disables, an ``autoApprove`` that changes nothing. ``mcpmount check`` shows them."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", MappingProxyType(dict(self.servers)))
        if self.settings.first_list_wait is not None:
            warn_deprecated(f"first_list_wait: {WAIT_MOVED}")
            settings, serve = _wait_moved(self.settings, self.serve)
            object.__setattr__(self, "settings", settings)
            object.__setattr__(self, "serve", serve)

    def with_serve(self, **given: object) -> RegistryConfig:
        """This config with ``given`` ``[serve]`` settings merged into its own, as
        ``mcpmount serve``'s flags are: given tokens and allowed hosts join the table's,
        ``allow_unauthenticated`` holds if either says so, any other key replaces the
        table's; None is not given. ``config.with_serve(transport="http", port=0)``.

        Raises:
            ConfigError: A key is unknown or a value invalid; the problem names the key.
        """
        return dataclasses.replace(self, serve=serve_given(self.serve, given))

    @classmethod
    def from_servers(cls, servers: Mapping[str, ServerSpec], **settings: object) -> RegistryConfig:
        """Build a config in code, without a file.

        Settings not given fall back to ``MCPMOUNT_*`` variables, then to the defaults.

        Args:
            servers: Namespace to server spec.
            **settings: `RegistrySettings` fields, e.g. ``max_name_length=80``.

        Raises:
            ConfigError: With path ``"<code>"``, if a namespace, a spec or a setting is invalid.
        """
        problems: list[str] = []
        registry = build_settings(
            settings, os.environ, env_wins=False, prefix=(), problems=problems
        )
        for namespace, spec in servers.items():
            _check_namespace(namespace, problems)
            if not isinstance(spec, tuple(KINDS.values())):
                problems.append(
                    line(("servers", namespace), "must be a StdioServer or an HttpServer")
                )
        if problems or registry is None:
            raise ConfigError("<code>", problems)
        return cls(settings=registry, servers=servers)


def _wait_moved(
    registry: RegistrySettings, serve: ServeSettings
) -> tuple[RegistrySettings, ServeSettings]:
    """``[registry] first_list_wait`` moved to ``[serve]``, unless that sets its own."""
    if "first_list_wait" not in serve.model_fields_set:
        serve = serve.model_copy(update={"first_list_wait": registry.first_list_wait})
    return registry.model_copy(update={"first_list_wait": None}), serve


def _check_namespace(namespace: str, problems: list[str]) -> bool:
    """Return whether ``namespace``, a key of ``servers``, is valid; else add the problem."""
    if (problem := namespace_problem(namespace)) is None:
        return True
    problems.append(line(("servers", namespace), problem))
    return False


def load_config(
    path: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    ask: InputPrompt | None = None,
    workspace: str | os.PathLike[str] | None = None,
    within: Sequence[str] = (),
    host_format: HostFormat | None = None,
) -> RegistryConfig:
    """Load and validate a config file: our TOML, or an MCP host's file in its own format.

    ``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``, ``args``, ``env``,
    ``cwd``, ``url``, ``headers`` and ``headers_command`` values, and in every string of
    ``[serve]``, before validation (``$$`` is a literal ``$``; no shell, ``~`` or globs).
    A host file also has its hosts' variables: ``${env:VAR}``, ``${userHome}``,
    ``${workspaceFolder}`` and VS Code's ``${input:id}``. ``MCPMOUNT_<KEY>`` variables
    override the ``[registry]`` table.

    Args:
        path: The config file: our TOML, or a host's file (`HostFormat`): JSON
            (``.json``), YAML (``.yaml``) or Codex's TOML (``mcp_servers``).
        environ: The variables to expand and read settings from; defaults to ``os.environ``.
        ask: Asks the user for a VS Code ``${input:id}`` that no ``MCPMOUNT_INPUT_<ID>``
            variable answers; None (the default) never asks.
        workspace: What ``${workspaceFolder}`` names; defaults to the folder holding the
            file's ``.vscode/`` or ``.cursor/`` folder, else the file's own folder.
        within: The keys of the object of a host file that holds its servers (Claude
            Code keeps a project's under ``("projects", "<folder>")``); none for the top.
        host_format: The host file's format, when its host is known; None tells it by
            the file's syntax, keys and folder (`sniff_format`).

    Returns:
        The config, with its servers in file order.

    Raises:
        ConfigError: If the file is missing, unreadable or invalid; one line per problem.
    """
    environ = os.environ if environ is None else environ
    file = Path(path)
    problems: list[str] = []
    try:
        document, syntax = read_syntax(file, problems)
    except ConfigError as exc:
        named = file.suffix.lower() in (".toml", ".json", ".jsonc", ".yaml", ".yml")
        if named or not any(problem.startswith("invalid TOML") for problem in exc.problems):
            raise
        # Its name says no syntax, so it was tried as TOML: say what else it could be.
        formats = "; ".join(FORMATS_READ)
        hint = f"is no format mcpmount reads ({formats})"
        raise ConfigError(exc.path, [*exc.problems, hint]) from None
    word = {"json": "an object", "yaml": "a mapping"}.get(syntax, "a table")
    tables = Tables(file.absolute().parent, environ, problems, word=word)
    serve = ServeSettings()
    if host_format is None:
        host_format = sniff_format(document, syntax, file)
    if host_format is not None:
        folder = workspace_of(file) if workspace is None else Path(workspace).absolute()
        registry, servers = read_host_file(
            document, tables, host_format=host_format, within=within, workspace=folder, ask=ask
        )
    else:
        registry, servers = _read_toml_file(document, tables)
        serve = read_serve(document.get("serve", {}), tables)
    if problems or registry is None:
        raise ConfigError(str(path), problems)
    if registry.first_list_wait is not None:
        variable = any(k.lower() == "mcpmount_first_list_wait" for k in environ)
        where = "MCPMOUNT_FIRST_LIST_WAIT" if variable else "registry.first_list_wait"
        logger.warning("%s: %s", where, WAIT_MOVED)
        registry, serve = _wait_moved(registry, serve)
    return RegistryConfig(
        settings=registry,
        servers=servers,
        path=file.absolute(),
        serve=serve,
        notes=tuple(tables.notes),
    )


def _read_toml_file(
    document: Table, tables: Tables
) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
    """Return the settings and the servers of our TOML file: ``[registry]`` and ``[servers]``."""
    known = ["registry", "servers", "serve"]
    if document and not any(key in document for key in known):
        formats = "; ".join(FORMATS_READ)
        tables.problems.append(f"is no format mcpmount reads ({formats})")
        return None, {}
    for key in document:
        if key not in known:
            tables.problems.append(line((key,), unknown_key(key, known)))
    registry = tables.table(document.get("registry", {}), ("registry",))
    settings = tables.settings(registry or {}, prefix=("registry",))
    servers: dict[str, ServerSpec] = {}
    for namespace, raw in (tables.table(document.get("servers", {}), ("servers",)) or {}).items():
        loc = ("servers", namespace)
        valid = _check_namespace(namespace, tables.problems)
        data = tables.table(raw, loc)
        if data is not None and (spec := tables.server(data, loc)) is not None and valid:
            servers[namespace] = spec
    return settings, servers
