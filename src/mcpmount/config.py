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

or, when its name ends in ``.json``, the ``{"mcpServers": {...}}`` file that MCP hosts use
(Claude Desktop's config, ``.mcp.json``).

This module never imports ``mcp`` and never starts anything, so ``mcpmount check`` can
validate a config without spawning a server. Every problem is reported at once, one line
each, naming the key; no line ever contains a value, because values may be secrets.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import logging
import os
import re
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Literal, LiteralString, TypeAlias, cast
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from mcpmount.errors import ConfigError
from mcpmount.naming import MAX_NAMESPACE_LENGTH, MIN_NAME_LENGTH, namespace_problem

__all__ = [
    "HttpServer",
    "RegistryConfig",
    "RegistrySettings",
    "ServerBase",
    "ServerSpec",
    "StdioServer",
    "load_config",
]

logger = logging.getLogger(__name__)

_ENV_PREFIX = "MCPMOUNT_"  # registry settings are also read from MCPMOUNT_<KEY>, any case


# --- field checks --------------------------------------------------------------------------
# Each raises PydanticCustomError with a message that never quotes the value.


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise PydanticCustomError("mcpmount_nul", "must not contain a NUL character")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("mcpmount_empty", "must not be empty")
    return _no_nul(value)


def _env_name(value: str) -> str:
    if not value or "=" in value or "\0" in value:
        raise PydanticCustomError(
            "mcpmount_env_name", "is not a valid environment variable name (empty, '=' or NUL)"
        )
    return value


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _header_name(value: str) -> str:
    if not _HEADER_NAME.fullmatch(value):
        raise PydanticCustomError("mcpmount_header_name", "is not a valid HTTP header name")
    return value


def _secret_without_nul(value: SecretStr) -> SecretStr:
    if "\0" in value.get_secret_value():
        raise PydanticCustomError("mcpmount_nul", "must not contain a NUL character")
    return value


def _secret_on_one_line(value: SecretStr) -> SecretStr:
    if any(ch in value.get_secret_value() for ch in "\r\n\0"):
        raise PydanticCustomError(
            "mcpmount_header_value", "must not contain a line break or a NUL character"
        )
    return value


_Text = Annotated[str, AfterValidator(_not_blank)]
_Arg = Annotated[str, AfterValidator(_no_nul)]
_EnvName = Annotated[str, AfterValidator(_env_name)]
_EnvValue = Annotated[SecretStr, AfterValidator(_secret_without_nul)]
_HeaderName = Annotated[str, AfterValidator(_header_name)]
_HeaderValue = Annotated[SecretStr, AfterValidator(_secret_on_one_line)]
_Timeout = Annotated[float | None, Field(gt=0, allow_inf_nan=False)]
_Limit = Annotated[int | None, Field(gt=0)]

LIMIT_KEYS = (
    "max_tools",
    "max_pages",
    "max_description_bytes",
    "max_schema_depth",
    "max_result_bytes",
    "max_message_bytes",
)
"""Registry limits that one server may override (``[servers.x] max_tools = 50``)."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --- servers -------------------------------------------------------------------------------


class ServerBase(BaseModel):
    """What every server declares, whatever its transport."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        hide_input_in_errors=True,
        use_attribute_docstrings=True,
    )

    required: bool = True
    """A failing required server fails the whole ``open_registry``; others are skipped."""

    startup_timeout: _Timeout = None
    """Seconds to spawn or connect, handshake and list tools; None uses the registry's."""

    call_timeout: _Timeout = None
    """Seconds one call may take; None uses the registry's."""

    defer: bool | list[str] = False
    """True hides every tool from the manifest; a list hides raw names matching its globs."""

    pin: list[str] = []
    """Globs of raw names that stay visible even when deferred."""

    trust_annotations: bool = False
    """Whether this server's tool annotations (``readOnlyHint``, ...) may be trusted."""

    invalid_names: Literal["refuse", "skip"] = "refuse"
    """What to do with a raw tool name that breaks SEP-986: refuse the server or skip the tool."""

    protocol: Literal["auto", "legacy"] = "auto"
    """The MCP handshake: ``auto`` probes ``server/discover`` first, ``legacy`` does not."""

    max_tools: _Limit = None
    """This server's ``max_tools``; None uses the registry's (so do the keys below)."""

    max_pages: _Limit = None
    max_description_bytes: _Limit = None
    max_schema_depth: _Limit = None
    max_result_bytes: _Limit = None
    max_message_bytes: _Limit = None

    def limits(self, settings: RegistrySettings) -> RegistrySettings:
        """Return ``settings`` with this server's limit overrides applied."""
        overrides = {key: value for key in LIMIT_KEYS if (value := getattr(self, key)) is not None}
        return settings.model_copy(update=overrides) if overrides else settings

    restart: Literal["never", "on-failure"] = "never"
    """Whether a server that dies after mounting is started again (with backoff)."""

    on_change: Literal["refuse", "warn", "accept"] = "refuse"
    """With a lock file: refuse, or accept with a warning, or accept tool definitions that
    differ from the pinned ones."""

    @field_validator("defer", mode="before")
    @classmethod
    def _check_defer(cls, value: object) -> object:
        # Checked up front so a bad value gets one line instead of one per union member.
        if isinstance(value, bool):
            return value
        if isinstance(value, list) and all(isinstance(p, str) for p in cast("list[object]", value)):
            return cast("list[str]", value)
        raise PydanticCustomError("mcpmount_defer", "must be true, false or a list of globs")

    def secret_values(self) -> list[str]:
        """Return the secret values of this server (see `redact`)."""
        return []

    def redact(self, text: str) -> str:
        """Replace every secret value of this server in ``text`` with ``***``.

        Secrets are hidden by value, not only by key: a server may echo its environment in
        its stderr or its error messages. A ``Bearer <token>`` also hides the bare token.
        """
        secrets: set[str] = set()
        for value in self.secret_values():
            secrets.add(value)
            secrets.update(part for part in value.split() if len(part) >= 6)
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def is_deferred(self, raw_name: str, defer_all: bool) -> bool:
        """Return whether the tool ``raw_name`` is hidden from the manifest.

        A ``pin`` match always wins; otherwise the tool is deferred if ``defer_all`` is set,
        ``defer`` is true, or ``defer`` is a list with a matching glob.

        Args:
            raw_name: The tool's name as the server listed it.
            defer_all: The registry's ``defer_all`` setting.
        """
        if any(fnmatchcase(raw_name, glob) for glob in self.pin):
            return False
        if isinstance(self.defer, bool):
            return defer_all or self.defer
        return defer_all or any(fnmatchcase(raw_name, glob) for glob in self.defer)


class StdioServer(ServerBase):
    """A server run as a child process that speaks MCP over its stdin and stdout."""

    transport: Literal["stdio"] = "stdio"
    """The tag; implied by ``command``."""

    command: _Text
    """The program to run, looked up on PATH; never run through a shell."""

    args: list[_Arg] = []
    """Its arguments, one string each (a single string is refused, never split)."""

    env: dict[_EnvName, _EnvValue] = {}
    """Variables added to the child's minimal environment; the values are secrets."""

    cwd: _Text | None = None
    """The child's working directory; a relative one is resolved against the config file."""

    def env_values(self) -> dict[str, str]:
        """Return ``env`` with the plain values, for spawning the process and nothing else."""
        return {name: value.get_secret_value() for name, value in self.env.items()}

    def secret_values(self) -> list[str]:
        """Return the values `redact` hides: the ``env`` values."""
        return list(self.env_values().values())


class HttpServer(ServerBase):
    """A server reached over streamable HTTP."""

    transport: Literal["http"] = "http"
    """The tag; implied by ``url``."""

    # Declared before ``url`` so that the url check can see it.
    allow_insecure: bool = False
    """Allow plain ``http://`` to a host that is not loopback."""

    url: str
    """The MCP endpoint: https, or http to a loopback host (or with ``allow_insecure``)."""

    headers: dict[_HeaderName, _HeaderValue] = {}
    """Headers sent with every request; the values are secrets."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str, info: ValidationInfo) -> str:
        def problem(message: LiteralString) -> PydanticCustomError:
            return PydanticCustomError("mcpmount_url", message)

        if any(ch.isspace() or not ch.isprintable() for ch in url):
            raise problem("must not contain whitespace or control characters")
        try:
            parts = urlsplit(url)
            host = parts.hostname
            _ = parts.port  # raises ValueError on a bad port
        except ValueError:
            raise problem("is not a valid URL") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise problem("must be an http:// or https:// URL")
        if not host:
            raise problem("must include a host")
        insecure_ok = info.data.get("allow_insecure", False) is True
        if scheme == "http" and not insecure_ok and not _is_loopback(host):
            raise problem(
                "must use https unless the host is loopback (127.0.0.0/8, localhost, ::1); "
                "set allow_insecure = true to allow plain http"
            )
        return url

    def header_values(self) -> dict[str, str]:
        """Return ``headers`` with the plain values, for the HTTP client and nothing else."""
        return {name: value.get_secret_value() for name, value in self.headers.items()}

    def secret_values(self) -> list[str]:
        """Return the values `redact` hides: header values, URL userinfo and query values."""
        parts = urlsplit(self.url)
        values = list(self.header_values().values())
        values += [v for v in (parts.username, parts.password) if v]
        values += [v for _, v in parse_qsl(parts.query) if v]
        return values

    def display_url(self) -> str:
        """Return the URL without userinfo, query string or fragment, safe for messages."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def __repr_args__(self) -> Iterable[tuple[str | None, object]]:
        # The URL may carry a token in its userinfo or query: show the display form only.
        for name, value in super().__repr_args__():
            yield name, self.display_url() if name == "url" else value


ServerSpec: TypeAlias = StdioServer | HttpServer
"""One server of the config: the transport decides the type."""


# --- registry settings ---------------------------------------------------------------------


class RegistrySettings(BaseSettings):
    """The registry's defaults and limits: the ``[registry]`` table and ``MCPMOUNT_*``."""

    model_config = SettingsConfigDict(
        env_prefix=_ENV_PREFIX,
        case_sensitive=False,
        extra="forbid",
        frozen=True,
        hide_input_in_errors=True,
        use_attribute_docstrings=True,
    )

    max_name_length: int = Field(default=64, ge=MIN_NAME_LENGTH, le=128)
    """The longest public tool name (64 is the limit of the major model APIs)."""

    startup_timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Seconds per server to spawn or connect, handshake and list its tools."""

    call_timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    """Seconds one call may take."""

    defer_all: bool = False
    """Defer every tool that is not pinned."""

    max_tools: int = Field(default=1000, gt=0)
    """The most tools one server may list."""

    max_pages: int = Field(default=100, gt=0)
    """The most ``tools/list`` pages one server may return."""

    max_description_bytes: int = Field(default=8192, gt=0)
    """The longest tool description, in UTF-8 bytes."""

    max_schema_depth: int = Field(default=32, gt=0)
    """The deepest nesting of a tool's input schema."""

    max_result_bytes: int = Field(default=1_048_576, gt=0)
    """The largest call result; a larger one is refused, never truncated."""

    max_message_bytes: int = Field(default=16_777_216, gt=0)
    """The largest message a server may send (one stdio line)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Read arguments, then ``MCPMOUNT_*``; never a ``.env`` file or a secrets directory."""
        return init_settings, env_settings


class _EnvironSource(EnvSettingsSource):
    """``EnvSettingsSource`` over a given mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ  # read by _load_env_vars, which __init__ calls
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # case_sensitive=False: the source looks names up in lowercase.
        return {name.lower(): value for name, value in self._environ.items()}


# --- the whole config ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegistryConfig:
    """A validated config: the registry settings and the servers to mount."""

    settings: RegistrySettings
    """Defaults and limits for the whole registry."""

    servers: Mapping[str, ServerSpec]
    """Namespace to server, in file order (read-only)."""

    path: Path | None = None
    """The absolute path of the file it was loaded from; None when built in code."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", MappingProxyType(dict(self.servers)))

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
        registry = _build_settings(settings, os.environ, env_wins=False, prefix=(), out=problems)
        for namespace, spec in servers.items():
            where = _format_loc(("servers", namespace))
            if (problem := namespace_problem(namespace)) is not None:
                problems.append(f"{where}: {problem}")
            if not isinstance(spec, ServerSpec):  # pyright: ignore[reportUnnecessaryIsInstance]
                problems.append(f"{where}: must be a StdioServer or an HttpServer")
        if problems or registry is None:
            raise ConfigError("<code>", problems)
        return cls(settings=registry, servers=servers)


def load_config(
    path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
) -> RegistryConfig:
    """Load and validate a config file: TOML, or an MCP host's ``mcpServers`` JSON.

    ``${VAR}`` and ``${VAR:-default}`` are expanded in ``args``, ``env``, ``cwd``, ``url`` and
    ``headers`` values before validation (``$$`` is a literal ``$``; no shell, ``~`` or globs).
    ``MCPMOUNT_<KEY>`` variables override the ``[registry]`` table.

    Args:
        path: The config file; a name ending in ``.json`` is read as ``mcpServers`` JSON.
        environ: The variables to expand and read settings from; defaults to ``os.environ``.

    Returns:
        The config, with its servers in file order.

    Raises:
        ConfigError: If the file is missing, unreadable or invalid; one line per problem.
    """
    environ = os.environ if environ is None else environ
    file = Path(path)
    is_json = file.suffix.lower() == ".json"
    problems: list[str] = []
    document = _read(file, problems, json_file=is_json)
    if document is None:
        raise ConfigError(str(path), problems)
    loader = _Loader(file.absolute().parent, environ, problems, json=is_json)
    if is_json:
        registry, servers = loader.host_file(document)
    else:
        registry, servers = loader.toml_file(document)
    if problems or registry is None:
        raise ConfigError(str(path), problems)
    return RegistryConfig(settings=registry, servers=servers, path=file.absolute())


# --- reading -------------------------------------------------------------------------------

_Loc: TypeAlias = tuple[str | int, ...]
_Table: TypeAlias = dict[str, object]


class _JsonObject(list[tuple[str, object]]):
    """A JSON object as its key-value pairs, so duplicate keys can be found and named."""


def _read(file: Path, problems: list[str], *, json_file: bool) -> _Table | None:
    """Return the file's top-level table, or None after adding the problem."""
    try:
        text = file.read_text(encoding="utf-8-sig")  # tolerate the BOM some editors write
    except FileNotFoundError:
        problems.append("file not found")
        return None
    except IsADirectoryError:
        problems.append("is a directory, not a config file")
        return None
    except UnicodeDecodeError:
        problems.append("is not valid UTF-8")
        return None
    except OSError as exc:
        problems.append(f"cannot be read: {exc.strerror}")
        return None
    if not json_file:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            problems.append(f"invalid TOML: {exc}")
            return None
    try:
        document = _unpack_json(json.loads(text, object_pairs_hook=_JsonObject), (), problems)
    except json.JSONDecodeError as exc:
        problems.append(f"invalid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno})")
        return None
    if not isinstance(document, dict):
        problems.append("must hold a JSON object")
        return None
    return cast("_Table", document)


def _unpack_json(node: object, loc: _Loc, problems: list[str]) -> object:
    """Turn `_JsonObject` pairs into dicts, naming every duplicate key."""
    if isinstance(node, _JsonObject):
        table: _Table = {}
        for key, value in node:
            if key in table:
                problems.append(f"{_format_loc((*loc, key))}: duplicate key")
            table[key] = _unpack_json(value, (*loc, key), problems)
        return table
    if isinstance(node, list):
        items = cast("list[object]", node)
        return [_unpack_json(item, (*loc, i), problems) for i, item in enumerate(items)]
    return node


# --- ${VAR} expansion ----------------------------------------------------------------------

_REFERENCE = re.compile(
    r"\$(?:(?P<dollar>\$)|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}|(?P<bad>\{))"
)


def _expand(value: str, where: str, environ: Mapping[str, str], problems: list[str]) -> str:
    """Return ``value`` with its references expanded; a lone ``$`` stays as it is."""

    def replace(match: re.Match[str]) -> str:
        if match["dollar"]:
            return "$"
        if match["bad"]:
            problems.append(
                f"{where}: malformed variable reference: write ${{NAME}} or ${{NAME:-default}}, "
                "and $$ for a literal $"
            )
            return ""
        name, default = match["name"], match["default"]
        found = environ.get(name)
        if default is not None and not found:  # like the shell: unset or empty
            return default
        if found is None:
            problems.append(
                f"{where}: environment variable {name} is not set "
                f"(use ${{{name}:-default}} to give a default)"
            )
            return ""
        return found

    return _REFERENCE.sub(replace, value)


_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|CREDENTIAL|AUTH", re.IGNORECASE)


def _warn_secret_arg(arg: object, where: str) -> None:
    """Warn when an argument expands a variable that looks like a secret.

    Arguments are world-readable in ``/proc/<pid>/cmdline``; ``env`` is not.
    """
    if not isinstance(arg, str):
        return
    for match in _REFERENCE.finditer(arg):
        if match["name"] and _SECRET_NAME.search(match["name"]):
            logger.warning(
                "%s: passes ${%s} on the command line, where every local user can read it "
                "(/proc/<pid>/cmdline); pass it in env instead",
                where,
                match["name"],
            )


# --- error lines ---------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _format_loc(loc: _Loc) -> str:
    """Return ``loc`` as a TOML-style dotted key: ``servers.fs.args[2]``, ``headers."X Y"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":  # pydantic's marker for an error in a dict key
            key = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            out += f".{key}" if out else key
    return out


def _unknown_key(key: str, candidates: Iterable[str]) -> str:
    match = difflib.get_close_matches(key, list(candidates), n=1)
    return f"unknown key; did you mean {match[0]!r}?" if match else "unknown key"


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_MESSAGES: Mapping[str, Callable[[Mapping[str, object]], str]] = {
    "missing": lambda _: "is required",
    "string_type": lambda _: "must be a string",
    "list_type": lambda _: "must be a list",
    "bool_type": lambda _: "must be true or false",
    "bool_parsing": lambda _: "must be true or false",
    "int_type": lambda _: "must be an integer",
    "int_parsing": lambda _: "must be an integer",
    "int_from_float": lambda _: "must be an integer",
    "float_type": lambda _: "must be a number",
    "float_parsing": lambda _: "must be a number",
    "finite_number": lambda _: "must be a finite number",
    "greater_than": lambda ctx: f"must be greater than {_number(ctx['gt'])}",
    "greater_than_equal": lambda ctx: f"must be at least {_number(ctx['ge'])}",
    "less_than": lambda ctx: f"must be less than {_number(ctx['lt'])}",
    "less_than_equal": lambda ctx: f"must be at most {_number(ctx['le'])}",
    "literal_error": lambda ctx: f"must be {ctx['expected']}",
}


def _message(error: ErrorDetails, table: str) -> str:
    """Return the problem in ``error`` in our words; pydantic's ``msg`` carries no input."""
    kind, loc = error["type"], error["loc"]
    if kind == "dict_type":
        return f"must be {table}"
    if kind == "list_type" and loc == ("args",):
        return "must be a list of strings (a single string is never split into arguments)"
    if (describe := _MESSAGES.get(kind)) is not None:
        return describe(error.get("ctx", {}))
    msg = error["msg"]
    return "must" + msg.removeprefix("Input should") if msg.startswith("Input should") else msg


def _validation_problems(
    exc: ValidationError,
    prefix: _Loc,
    *,
    table: str,
    unknown: Callable[[str], str],
    skip: Collection[_Loc] = (),
    rename: Callable[[str], _Loc | None] = lambda _: None,
) -> list[str]:
    """Return one line per error in ``exc``, each naming its key under ``prefix``.

    ``unknown`` words an unknown top-level key; errors under a key in ``skip`` are dropped
    (already reported); ``rename`` may give another full location for a top-level key.
    """
    lines: list[str] = []
    for error in exc.errors(include_url=False, include_input=False):
        loc = error["loc"]
        if any(loc[: len(s)] == s for s in skip):
            continue
        head = loc[0] if loc else None
        where = (*prefix, *loc)
        if isinstance(head, str) and (renamed := rename(head)) is not None:
            where = (*renamed, *loc[1:])
        if error["type"] == "extra_forbidden" and len(loc) == 1 and isinstance(head, str):
            message = unknown(head)
        else:
            message = _message(error, table)
        lines.append(f"{_format_loc(where)}: {message}" if where else message)
    return lines


# --- building ------------------------------------------------------------------------------


def _build_settings(
    values: Mapping[str, object],
    environ: Mapping[str, str],
    *,
    env_wins: bool,
    prefix: _Loc,
    out: list[str],
) -> RegistrySettings | None:
    """Validate ``values`` merged with ``MCPMOUNT_*`` from ``environ``; add problems to ``out``."""
    env = _EnvironSource(RegistrySettings, environ)
    from_env = env()
    given = InitSettingsSource(RegistrySettings, init_kwargs=dict(values))
    sources = (env, given) if env_wins else (given, env)
    try:
        # BaseSettings.__init__ takes _build_sources (pydantic-settings >= 2.13); pyright sees
        # only the __init__ it synthesizes from the fields.
        return RegistrySettings(_build_sources=(sources, {}))  # pyright: ignore[reportCallIssue]
    except ValidationError as exc:

        def rename(key: str) -> _Loc | None:
            came_from_env = key in from_env and (env_wins or key not in values)
            return (_ENV_PREFIX + key.upper(),) if came_from_env else None

        out.extend(
            _validation_problems(
                exc,
                prefix,
                table="a table",
                unknown=lambda key: _unknown_key(key, RegistrySettings.model_fields),
                rename=rename,
            )
        )
        return None


_EXPANDED_TEXT = ("cwd", "url")
_EXPANDED_TABLES = ("env", "headers")

_HOST_ONLY_KEYS = frozenset(
    {"disabled", "autoApprove", "alwaysAllow", "timeout", "description", "disabledTools"}
)
"""Keys MCP hosts add to ``mcpServers`` entries that mean nothing here; they are ignored."""

_HOST_KEYS = ("command", "args", "env", "cwd", "url", "headers", "type")

_HOST_TYPES: Mapping[str, Literal["stdio", "http"]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
}

_INVALID_RUN = re.compile(r"[^a-z0-9_-]+|_{2,}")
_LEADING_NON_LETTERS = re.compile(r"^[^a-z]+")


def _derive_namespace(name: str) -> str:
    """Return a namespace for an MCP host's server name (``"GitHub Tools"`` -> ``github-tools``)."""
    namespace = _INVALID_RUN.sub("-", name.lower())
    namespace = _LEADING_NON_LETTERS.sub("", namespace)
    return namespace[:MAX_NAMESPACE_LENGTH].rstrip("-_")


class _Loader:
    """Turns a parsed document into settings and servers, adding every problem it finds."""

    def __init__(
        self, base: Path, environ: Mapping[str, str], problems: list[str], *, json: bool
    ) -> None:
        self.base = base
        self.environ = environ
        self.problems = problems
        self.table = "an object" if json else "a table"  # what a mapping is called in the file

    def toml_file(self, document: _Table) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
        for key in document:
            if key not in ("registry", "servers"):
                message = _unknown_key(key, ["registry", "servers"])
                self.problems.append(f"{_format_loc((key,))}: {message}")
        registry = self._table(document.get("registry", {}), ("registry",))
        settings = _build_settings(
            registry or {}, self.environ, env_wins=True, prefix=("registry",), out=self.problems
        )
        servers: dict[str, ServerSpec] = {}
        for namespace, raw in (
            self._table(document.get("servers", {}), ("servers",)) or {}
        ).items():
            loc = ("servers", namespace)
            if (problem := namespace_problem(namespace)) is not None:
                self.problems.append(f"{_format_loc(loc)}: {problem}")
            data = self._table(raw, loc)
            if data is not None and (spec := self._server(data, loc, "transport")) and not problem:
                servers[namespace] = spec
        return settings, servers

    def host_file(self, document: _Table) -> tuple[RegistrySettings | None, dict[str, ServerSpec]]:
        # Other top-level keys are the host's own settings (Claude Desktop keeps many there).
        settings = _build_settings({}, self.environ, env_wins=True, prefix=(), out=self.problems)
        if "mcpServers" not in document:
            self.problems.append(
                'mcpServers: is required (an MCP host file is {"mcpServers": {...}})'
            )
            return settings, {}
        servers: dict[str, ServerSpec] = {}
        names: dict[str, str] = {}
        for name, raw in (self._table(document["mcpServers"], ("mcpServers",)) or {}).items():
            loc = ("mcpServers", name)
            data = self._table(raw, loc)
            if data is None or (data := self._from_host(data, loc)) is None:
                continue
            namespace = _derive_namespace(name)
            if not namespace:
                self.problems.append(
                    f"{_format_loc(loc)}: cannot derive a namespace: no ASCII letter"
                )
            elif (other := names.setdefault(namespace, name)) != name:
                self.problems.append(
                    f"{_format_loc(loc)}: {json.dumps(other)} and {json.dumps(name)} both become "
                    f"the namespace {namespace!r}; rename one"
                )
            spec = self._server(data, loc, "type")
            if spec is not None and namespace and names[namespace] == name:
                servers[namespace] = spec
        return settings, servers

    def _table(self, value: object, loc: _Loc) -> _Table | None:
        if isinstance(value, dict):
            return cast("_Table", value)
        self.problems.append(f"{_format_loc(loc)}: must be {self.table}")
        return None

    def _from_host(self, entry: _Table, loc: _Loc) -> _Table | None:
        """Return an ``mcpServers`` entry in our keys, or None if it is disabled or broken."""
        disabled = entry.get("disabled", False)
        if not isinstance(disabled, bool):
            self.problems.append(f"{_format_loc((*loc, 'disabled'))}: must be true or false")
        elif disabled:
            return None
        data: _Table = {}
        for key, value in entry.items():
            if key in _HOST_KEYS:
                data[key] = value
            elif key not in _HOST_ONLY_KEYS:
                self.problems.append(f"{_format_loc((*loc, key))}: {_unknown_key(key, _HOST_KEYS)}")
        if "type" in data:
            kind = data.pop("type")
            if kind == "sse":
                self.problems.append(
                    f"{_format_loc((*loc, 'type'))}: SSE is not supported; "
                    'use streamable HTTP ("type": "http")'
                )
                return None
            if not isinstance(kind, str) or kind not in _HOST_TYPES:
                expected = ", ".join(map(repr, _HOST_TYPES))
                self.problems.append(f"{_format_loc((*loc, 'type'))}: must be one of {expected}")
                return None
            data["transport"] = _HOST_TYPES[kind]
        return data

    def _server(self, data: _Table, loc: _Loc, tag: str) -> ServerSpec | None:
        """Expand, pick the model and validate one server; None after adding its problems."""
        skip = self._expand(data, loc)
        cwd = data.get("cwd")
        if isinstance(cwd, str) and cwd and ("cwd",) not in skip:
            data["cwd"] = str(self.base / cwd)  # an absolute cwd replaces the base
        model = self._pick(data, loc, tag)
        if model is None:
            return None
        other, other_kind = (HttpServer, "http") if model is StdioServer else (StdioServer, "stdio")
        try:
            return model.model_validate(data)
        except ValidationError as exc:

            def unknown(key: str) -> str:
                if key in other.model_fields:
                    return f"unknown key; only {other_kind} servers take it"
                return _unknown_key(key, model.model_fields)

            self.problems.extend(
                _validation_problems(
                    exc,
                    loc,
                    table=self.table,
                    unknown=unknown,
                    skip=skip,
                )
            )
            return None

    def _expand(self, data: _Table, loc: _Loc) -> set[_Loc]:
        """Expand references in place; return the keys whose expansion failed."""
        failed: set[_Loc] = set()

        def expand(value: object, key: _Loc) -> object:
            if not isinstance(value, str):
                return value  # validation reports the type
            before = len(self.problems)
            expanded = _expand(value, _format_loc((*loc, *key)), self.environ, self.problems)
            if len(self.problems) > before:
                failed.add(key)
            return expanded

        for key in _EXPANDED_TEXT:
            if key in data:
                data[key] = expand(data[key], (key,))
        if isinstance(args := data.get("args"), list):
            items = cast("list[object]", args)
            for i, arg in enumerate(items):
                _warn_secret_arg(arg, _format_loc((*loc, "args", i)))
            data["args"] = [expand(arg, ("args", i)) for i, arg in enumerate(items)]
        for key in _EXPANDED_TABLES:
            if isinstance(table := data.get(key), dict):
                entries = cast("_Table", table)
                data[key] = {name: expand(value, (key, name)) for name, value in entries.items()}
        return failed

    def _pick(
        self, data: _Table, loc: _Loc, tag: str
    ) -> type[StdioServer] | type[HttpServer] | None:
        """Return the model that ``command``, ``url`` and the explicit tag agree on."""
        where = _format_loc(loc)
        has_command, has_url = "command" in data, "url" in data
        if has_command and has_url:
            self.problems.append(f"{where}: give either command (stdio) or url (http), not both")
            return None
        if not has_command and not has_url:
            self.problems.append(f"{where}: give either command (stdio) or url (http)")
            return None
        implied = "stdio" if has_command else "http"
        given = data.get("transport", implied)
        if given == "sse":
            self.problems.append(
                f'{where}.{tag}: SSE is not supported; use streamable HTTP (transport = "http")'
            )
            return None
        if given not in ("stdio", "http"):
            self.problems.append(f"{where}.{tag}: must be 'stdio' or 'http'")
            return None
        if given != implied:
            key = "command" if has_command else "url"
            self.problems.append(f"{where}.{tag}: says {given}, but {key} means {implied}")
            return None
        return StdioServer if implied == "stdio" else HttpServer
