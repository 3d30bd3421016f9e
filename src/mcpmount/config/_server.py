"""What every server declares, whatever its transport: `ServerBase`.

A server table is one kind or another by its keys: ``command`` makes a stdio server and
``url`` an http one (`IMPLIED_BY`). An explicit ``transport`` tag may say the same, never
something else; a url server's tag may also say how the URL is reached (`TRANSPORTS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any, ClassVar, Literal, Self, cast

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from mcpmount.config._deprecation import warn_deprecated
from mcpmount.config._effective import EffectiveSettings
from mcpmount.config._fields import STRICT_DATA, Command, EnvName, Limit, RootUri, Timeout
from mcpmount.config._override import ToolOverride
from mcpmount.config._secrecy import decide
from mcpmount.config._settings import LIMIT_KEYS, RegistrySettings

PIN_RENAMED = "the key `pin` is renamed `visible` (it keeps tools listed); rename it"
"""What a server table or spec that still says ``pin`` is told."""

PIN_AND_VISIBLE = "the old name of `visible`, which is set too: merge it into `visible`"
"""What a server table or spec that says both ``pin`` and ``visible`` is told."""

IMPLIED_BY: Mapping[str, str] = {"command": "stdio", "url": "http"}
"""The key that makes a server table each kind of server."""

TRANSPORTS: Mapping[str, tuple[str, ...]] = {"stdio": ("stdio",), "http": ("http", "sse", "auto")}
"""The ``transport`` tags each kind of server takes, its own kind's name first."""


class ServerBase(BaseModel):
    """What every server declares, whatever its transport."""

    model_config = STRICT_DATA

    @model_validator(mode="before")
    @classmethod
    def _visible_was_pin(cls, data: Any) -> Any:
        """Read the old ``pin`` key as ``visible``, with a warning."""
        if not isinstance(data, dict):
            return cast("object", data)
        table = dict(cast("dict[str, object]", data))
        if "pin" in table:
            if "visible" in table:
                raise ValueError(PIN_AND_VISIBLE)
            warn_deprecated(PIN_RENAMED)
            table["visible"] = table.pop("pin")
        return table

    required: bool = True
    """A failing required server fails the whole ``open_registry``; others are skipped.
    ``serve`` and the listing commands (``tools``, ``search``, ...) hold a server required
    only where its table says ``required = true``: one that does not say is optional
    there, reported and (under ``serve``) retried while the others serve."""

    startup_timeout: Timeout = None
    """Seconds to spawn or connect, handshake and list tools; None uses the registry's."""

    call_timeout: Timeout = None
    """Seconds one call may take; None uses the registry's."""

    defer: bool | list[str] = False
    """True hides every tool from the manifest; a list hides raw names matching its globs."""

    visible: list[str] = []
    """Globs of raw names that stay listed even when deferred (formerly ``pin``, still
    read with a warning: "pins" are the lock file's hashes)."""

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

    auto_approve: list[str] = []
    """Globs of raw names whose calls never wait for the approver, whatever ``approve`` and
    the registry's ``approval`` say (``autoApprove`` or ``alwaysAllow`` in a host file)."""
    prefix: bool = True
    """Publish this server's tools and prompts as ``<namespace>__<name>`` and its resources
    as ``mcpmount://<namespace>/<uri>``; false keeps its own names and URIs (to front one
    server transparently). A name that does not fit model APIs is still sanitized, with
    its hash suffix; a name or URI another server publishes too refuses the later one."""

    invalid_names: Literal["refuse", "skip", "sanitize"] = "refuse"
    """What to do with a raw tool name that breaks SEP-986: refuse the server, skip the
    tool, or mount it under a sanitized public name (calls still use the raw name)."""

    hidden_text: Literal["refuse", "strip"] | None = None
    """What to do with hidden characters (tag, bidi, zero-width, variation-selector
    payloads, terminal escapes) in the text this server lists for the model and in its
    results, prompts and resource contents; None uses the registry's ``hidden_text``."""

    overrides: dict[str, ToolOverride] = {}
    """Raw tool name -> the name, title and description the model is shown instead."""

    roots: list[RootUri] | None = None
    """The roots (``file://`` URIs, or absolute paths) this server is told when it asks
    and no client can tell it: outside a call (a server may ask as it starts), or when
    the client of the call offers none (``serve``), or when the host gives no roots
    handler; None uses the registry's."""

    protocol: Literal["auto", "legacy"] = "auto"
    """The MCP handshake: ``auto`` probes ``server/discover`` first, ``legacy`` does not."""

    max_tools: Limit = None
    """This server's ``max_tools``; None uses the registry's."""

    max_prompts: Limit = None
    """This server's ``max_prompts``; None uses the registry's."""

    max_resources: Limit = None
    """This server's ``max_resources``; None uses the registry's."""

    max_pages: Limit = None
    """This server's ``max_pages``; None uses the registry's."""

    max_description_bytes: Limit = None
    """This server's ``max_description_bytes``; None uses the registry's."""

    max_schema_depth: Limit = None
    """This server's ``max_schema_depth``; None uses the registry's."""

    max_result_bytes: Limit = None
    """This server's ``max_result_bytes``; None uses the registry's."""

    max_message_bytes: Limit = None
    """This server's ``max_message_bytes``; None uses the registry's."""

    def effective(self, settings: RegistrySettings) -> EffectiveSettings:
        """Return the settings this server runs with: each key it inherits (`INHERITED`,
        every key above whose None "uses the registry's"), its own where set, else the
        registry's. Resolve it once per server (at start) and read it from there."""
        return EffectiveSettings.of(self, settings)

    def limits(self, settings: RegistrySettings) -> RegistrySettings:
        """Deprecated: read the limits from `effective`. Return ``settings`` with this
        server's limit overrides applied."""
        warn_deprecated("ServerBase.limits(settings) is replaced by ServerBase.effective(settings)")
        overrides = {key: value for key in LIMIT_KEYS if (value := getattr(self, key)) is not None}
        return settings.model_copy(update=overrides) if overrides else settings

    start: Literal["eager", "background", "lazy"] | None = None
    """How it starts when its lists are cached (see the registry's ``start``); None uses
    the registry's."""

    manifest_ttl: Timeout = None
    """Seconds its cached lists are used; None uses the registry's."""

    idle_timeout: Timeout = None
    """Seconds after its last call it is stopped (``background`` or ``lazy`` only); None
    uses the registry's."""

    sessions: Literal["shared", "per_client"] = "shared"
    """``shared``: one upstream session (one process, for stdio) serves every client.
    ``per_client``: each client of ``serve`` (its session, else its conversation, else its
    principal) gets its own, opened on its first call and closed when it leaves or idles;
    the shared one still lists. Costs one process (stdio) or HTTP session per client."""

    session_idle_timeout: float = Field(default=600.0, gt=0, allow_inf_nan=False)
    """Seconds a ``per_client`` session may go without a request before it is closed."""

    max_client_sessions: int = Field(default=100, ge=1)
    """How many ``per_client`` sessions may be open at once; past it a new client's call is
    refused (the clients that have one go on)."""

    restart: Literal["never", "on-failure"] = "never"
    """Whether a server that dies after mounting is started again (with backoff)."""

    on_change: Literal["refuse", "warn", "accept"] = "refuse"
    """With a lock file: refuse, or accept with a warning, or accept tool definitions that
    differ from the pinned ones."""

    block_secrets: bool | None = None
    """Also refuse a call to this server whose arguments carry a secret of its own, or
    text in a well-known credential format (``ghp_...``, ``sk-...``, ``xoxb-...``, AWS
    keys, JWTs, private keys); None uses the registry's. Another server's secret is
    refused whatever this says (see the security page)."""

    secrets: list[EnvName] = []
    """Names of variables (``${VAR}`` references, ``env`` keys, headers) whose values are
    secrets whatever they look like: for a credential the guard's rules miss."""

    not_secrets: list[EnvName] = []
    """Names of variables whose values are never secrets: for a plain value the guard's
    rules take for one (a long random-looking ID). See the security page."""

    before_call: Command | None = None
    """A program and its arguments, never run through a shell, that sees every request to
    this server before it is sent (tool calls, prompt gets, resource reads, completions):
    the request as a JSON object on its stdin (``kind``, ``server``, ``tool``,
    ``raw_name``, ``arguments``). Exit status 0 lets it through; any other refuses it, with
    the first line the program printed (stdout, else stderr) as the reason. It runs with
    the user's environment, for at most ``before_call_timeout`` seconds."""

    before_call_timeout: float = Field(default=10.0, gt=0, allow_inf_nan=False)
    """Seconds ``before_call`` may run; past them the call is refused and the program
    stopped (its whole process group)."""

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
    """The secrets among the values ``${VAR}`` references took (`decide`), OAuth tokens
    and what ``headers_command`` printed."""

    secrets_changed: ClassVar[int] = 0
    """How many times `with_expanded` ran, on any spec: what keeps a set of the secrets
    of many specs (the registry's guard) knows it is stale when this changed."""

    def with_expanded(self, values: Iterable[str]) -> Self:
        """Record ``values`` (the secrets among those expanded at load time, or printed by
        ``headers_command``, or OAuth tokens) as secrets.

        Returns:
            This spec, for chaining at its creation.
        """
        self._expanded = tuple(dict.fromkeys(values))
        ServerBase.secrets_changed += 1
        return self

    def secret_values(self) -> list[str]:
        """Return the secret values of this server (see `redact`): what the secret guard
        keeps to it, and what its messages hide."""
        return list(self._expanded)

    def named_secrets(self, values: Iterable[tuple[str, str]]) -> list[str]:
        """The secrets among ``values`` (each a name and its value: a variable, an ``env``
        key, a header), by the rules (`decide`) and this server's ``secrets`` and
        ``not_secrets``."""
        return decide(values, self.secrets, self.not_secrets)

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

        A ``visible`` match always wins; otherwise the tool is deferred if ``defer_all`` is set,
        ``defer`` is true, or ``defer`` is a list with a matching glob.

        Args:
            raw_name: The tool's name as the server listed it.
            defer_all: The registry's ``defer_all`` setting.
        """
        if any(fnmatchcase(raw_name, glob) for glob in self.visible):
            return False
        if isinstance(self.defer, bool):
            return defer_all or self.defer
        return defer_all or any(fnmatchcase(raw_name, glob) for glob in self.defer)
