"""Server specs: what every server declares, one model per transport kind, and their union.

A server table is one kind or another by its keys: ``command`` makes a stdio server and
``url`` an http one. An explicit ``transport`` tag may say the same, never something else;
a url server's tag may also say how the URL is reached (`TRANSPORTS`).
`ServerSpec` is the pydantic discriminated union of the kinds, told apart by `kind_of`, so
another transport is one more member (and one more entry in `KINDS`), with `kind_of` taught
how to recognise it.
"""

from __future__ import annotations

import difflib
import ipaddress
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Annotated, Literal, LiteralString, Self, TypeAlias, cast
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from mcpmount.config._fields import (
    STRICT_DATA,
    Arg,
    EnvName,
    EnvValue,
    HeaderName,
    HeaderValue,
    Limit,
    Text,
    Timeout,
)
from mcpmount.config._override import ToolOverride
from mcpmount.config._settings import LIMIT_KEYS, RegistrySettings

IMPLIED_BY: Mapping[str, str] = {"command": "stdio", "url": "http"}
"""The key that makes a server table each kind of server."""

TRANSPORTS: Mapping[str, tuple[str, ...]] = {"stdio": ("stdio",), "http": ("http", "sse", "auto")}
"""The ``transport`` tags each kind of server takes, its own kind's name first."""

_EITHER = " or ".join(f"{key} ({kind})" for key, kind in IMPLIED_BY.items())


class ServerBase(BaseModel):
    """What every server declares, whatever its transport."""

    model_config = STRICT_DATA

    required: bool = True
    """A failing required server fails the whole ``open_registry``; others are skipped."""

    startup_timeout: Timeout = None
    """Seconds to spawn or connect, handshake and list tools; None uses the registry's."""

    call_timeout: Timeout = None
    """Seconds one call may take; None uses the registry's."""

    defer: bool | list[str] = False
    """True hides every tool from the manifest; a list hides raw names matching its globs."""

    pin: list[str] = []
    """Globs of raw names that stay visible even when deferred."""

    tools: list[str] | None = None
    """Globs of the raw names to mount; None mounts every tool (``enabledTools`` in an
    ``mcpServers`` file). A tool filtered out is not listed, searchable or callable."""

    exclude_tools: list[str] = []
    """Globs of raw names never mounted, even when ``tools`` matches them
    (``disabledTools`` in an ``mcpServers`` file)."""

    trust_annotations: bool = False
    """Whether this server's tool annotations (``readOnlyHint``, ...) may be trusted."""

    approve: list[str] = []
    """Globs of raw names whose calls wait for the registry's approver (``approval``)."""

    invalid_names: Literal["refuse", "skip", "sanitize"] = "refuse"
    """What to do with a raw tool name that breaks SEP-986: refuse the server, skip the
    tool, or mount it under a sanitized public name (calls still use the raw name)."""

    overrides: dict[str, ToolOverride] = {}
    """Raw tool name -> the name, title and description the model is shown instead."""

    protocol: Literal["auto", "legacy"] = "auto"
    """The MCP handshake: ``auto`` probes ``server/discover`` first, ``legacy`` does not."""

    max_tools: Limit = None
    """This server's ``max_tools``; None uses the registry's (so do the keys below)."""

    max_prompts: Limit = None
    max_resources: Limit = None
    max_pages: Limit = None
    max_description_bytes: Limit = None
    max_schema_depth: Limit = None
    max_result_bytes: Limit = None
    max_message_bytes: Limit = None

    def limits(self, settings: RegistrySettings) -> RegistrySettings:
        """Return ``settings`` with this server's limit overrides applied."""
        overrides = {key: value for key in LIMIT_KEYS if (value := getattr(self, key)) is not None}
        return settings.model_copy(update=overrides) if overrides else settings

    restart: Literal["never", "on-failure"] = "never"
    """Whether a server that dies after mounting is started again (with backoff)."""

    on_change: Literal["refuse", "warn", "accept"] = "refuse"
    """With a lock file: refuse, or accept with a warning, or accept tool definitions that
    differ from the pinned ones."""

    @field_validator("transport", mode="before", check_fields=False)
    @classmethod
    def _check_transport(cls, value: object) -> object:
        # Each kind declares ``transport``; the union chose this one by its key.
        kind = cls.model_fields["transport"].default
        if value in TRANSPORTS[kind]:
            return value
        every = [tag for tags in TRANSPORTS.values() for tag in tags]
        if value in every:
            key = next(key for key, implied in IMPLIED_BY.items() if implied == kind)
            raise PydanticCustomError(
                "mcpmount_transport",
                "says {given}, but {key} means {kind}",
                {"given": value, "key": key, "kind": kind},
            )
        kinds = ", ".join(map(repr, every[:-1])) + f" or {every[-1]!r}"
        raise PydanticCustomError("mcpmount_transport", "must be {kinds}", {"kinds": kinds})

    @field_validator("defer", mode="before")
    @classmethod
    def _check_defer(cls, value: object) -> object:
        # Checked up front so a bad value gets one line instead of one per union member.
        if isinstance(value, bool):
            return value
        if isinstance(value, list) and all(isinstance(p, str) for p in cast("list[object]", value)):
            return cast("list[str]", value)
        raise PydanticCustomError("mcpmount_defer", "must be true, false or a list of globs")

    _expanded: tuple[str, ...] = PrivateAttr(default=())
    """Values ``${VAR}`` references took from the environment, in any key: secrets too."""

    def with_expanded(self, values: Iterable[str]) -> Self:
        """Record ``values`` (expanded from the environment at load time) as secrets.

        Returns:
            This spec, for chaining at its creation.
        """
        self._expanded = tuple(dict.fromkeys(values))
        return self

    def secret_values(self) -> list[str]:
        """Return the secret values of this server (see `redact`)."""
        return list(self._expanded)

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

    def filters_out(self, raw_name: str) -> bool:
        """Return whether the tool ``raw_name`` is filtered out (never mounted)."""
        if self.tools is not None and not any(fnmatchcase(raw_name, g) for g in self.tools):
            return True
        return any(fnmatchcase(raw_name, glob) for glob in self.exclude_tools)

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

    command: Text
    """The program to run, looked up on PATH; never run through a shell."""

    args: list[Arg] = []
    """Its arguments, one string each (a single string is refused, never split)."""

    env: dict[EnvName, EnvValue] = {}
    """Variables added to the child's minimal environment; the values are secrets."""

    cwd: Text | None = None
    """The child's working directory; a relative one is resolved against the config file."""

    def env_values(self) -> dict[str, str]:
        """Return ``env`` with the plain values, for spawning the process and nothing else."""
        return {name: value.get_secret_value() for name, value in self.env.items()}

    def secret_values(self) -> list[str]:
        """Return the values `redact` hides: the ``env`` values, and expanded ones."""
        return [*self.env_values().values(), *super().secret_values()]

    def __repr_args__(self) -> Iterable[tuple[str | None, object]]:
        # An argument or the cwd may hold a value expanded from a secret variable.
        for name, value in super().__repr_args__():
            if name == "args":
                yield name, [self.redact(arg) for arg in self.args]
            elif name == "cwd" and self.cwd is not None:
                yield name, self.redact(self.cwd)
            else:
                yield name, value


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpServer(ServerBase):
    """A server reached over HTTP: streamable HTTP, the legacy HTTP+SSE transport, or either."""

    transport: Literal["http", "sse", "auto"] = "http"
    """How the URL is reached: ``http`` (streamable HTTP; implied by ``url``), ``sse`` (the
    legacy HTTP+SSE transport: a GET stream whose first event names where to POST), or
    ``auto`` (streamable HTTP, or SSE when the server answers a POST of ``initialize`` with
    a 4xx as an SSE-only server does)."""

    # Declared before ``url`` so that the url check can see it.
    allow_insecure: bool = False
    """Allow plain ``http://`` to a host that is not loopback."""

    url: str
    """The MCP endpoint: https, or http to a loopback host (or with ``allow_insecure``)."""

    headers: dict[HeaderName, HeaderValue] = {}
    """Headers sent with every request; the values are secrets."""

    get_stream: bool = True
    """Whether streamable HTTP opens its standalone GET stream, on which a server may send
    requests and notifications outside any call; false for a server that never serves it."""

    @field_validator("get_stream")
    @classmethod
    def _check_get_stream(cls, value: bool, info: ValidationInfo) -> bool:
        if not value and info.data.get("transport") == "sse":
            raise PydanticCustomError(
                "mcpmount_get_stream",
                "applies to streamable HTTP only; an SSE server's one stream is its GET",
            )
        return value

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
        return values + super().secret_values()

    def display_url(self) -> str:
        """Return the URL without userinfo, query string, fragment or secret, for messages."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return self.redact(urlunsplit((parts.scheme, host, parts.path, "", "")))

    def __repr_args__(self) -> Iterable[tuple[str | None, object]]:
        # The URL may carry a token in its userinfo or query: show the display form only.
        for name, value in super().__repr_args__():
            yield name, self.display_url() if name == "url" else value


KINDS: Mapping[str, type[StdioServer | HttpServer]] = {"stdio": StdioServer, "http": HttpServer}
"""Each kind of server by its ``transport`` tag."""


def kind_of(value: object) -> str | None:
    """Return the kind of a spec, or the kind a table's keys imply (None if they imply none).

    This is `ServerSpec`'s discriminator.
    """
    if isinstance(value, StdioServer):
        return "stdio"
    if isinstance(value, HttpServer):
        return "http"
    if not isinstance(value, dict):
        return None
    table = cast("dict[str, object]", value)
    implied = [kind for key, kind in IMPLIED_BY.items() if key in table]
    return implied[0] if len(implied) == 1 else None


def _one_kind(value: object) -> object:
    """Word the ways a table can fail to pick a kind better than the union's own error.

    Several kind keys at once are one problem. With none, a key close to one of them is
    taken for it misspelt and named as an unknown key; otherwise the union says what to add.
    """
    if not isinstance(value, dict):
        return value
    table = cast("dict[str, object]", value)
    present = [key for key in IMPLIED_BY if key in table]
    if len(present) > 1:
        raise PydanticCustomError(
            "mcpmount_kind", "give either {either}, not both", {"either": _EITHER}
        )
    if present:
        return table
    known = {name for model in KINDS.values() for name in model.model_fields}
    misspelt = [
        InitErrorDetails(type="extra_forbidden", loc=(key,), input=table[key])
        for key in table
        if key not in known and difflib.get_close_matches(key, IMPLIED_BY, n=1)
    ]
    if misspelt:
        raise ValidationError.from_exception_data("ServerSpec", misspelt, hide_input=True)
    return table


ServerSpec: TypeAlias = Annotated[
    Annotated[StdioServer, Tag("stdio")] | Annotated[HttpServer, Tag("http")],
    Discriminator(
        kind_of,
        custom_error_type="mcpmount_kind",
        custom_error_message=f"give either {_EITHER}",
    ),
    BeforeValidator(_one_kind),
]
"""One server of the config: `StdioServer` or `HttpServer`, told apart by `kind_of`."""

SPEC = TypeAdapter[ServerSpec](ServerSpec, config=ConfigDict(hide_input_in_errors=True))
"""Validates one server table into the kind its keys imply."""
