"""Who may use HTTP ``mcpmount serve`` and read its metrics, how it stops, and what it
offers its clients: the ``[serve]`` table.

Where it listens is `ServingSettings`' part of it, the call log `CallLogSettings`'; every
``serve`` flag overrides the key of its name (`RegistryConfig.with_serve`).

::

    [serve]
    allowed_hosts = ["mcp.example.com"]     # Host names clients may use (DNS-rebinding check)
    tokens_file = "serve-tokens.txt"        # one token a line: TOKEN [ns1,ns2]
    policy = "policy.cedar"                 # Cedar policies: who may use which tool
    metrics_port = 9100                     # /metrics on a listener of its own (metrics_host)
    metrics_token = "${METRICS_TOKEN}"      # /metrics, and /readyz's reasons, to this token
    call_tool = "sessionless"               # call_tool beside tool_search: "every" client
    resume_window = 30                      # seconds a left call waits for its client
    drain = 5                               # on SIGTERM: seconds /readyz is 503 before closing
    stop_timeout = 10                       # then: seconds the calls in flight get to finish

    [serve.tokens.ci]                       # the key names the token in logs, never its value
    token = "${CI_MCP_TOKEN}"
    namespaces = ["fs", "search"]           # optional: the namespaces it may see; default all

    [serve.oauth]                           # an OAuth resource server: JWT access tokens
    issuer = "https://auth.example.com"
    jwks_url = "https://auth.example.com/jwks"
    resource = "https://mcp.example.com/mcp"
    scopes = ["mcp"]

``${VAR}`` and ``${VAR:-default}`` are expanded in every string of the table; a value taken
from the environment is a secret (`ServeSettings.redact`), and tokens are never shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Literal, Self, cast

from pydantic import AfterValidator, BaseModel, Field, PrivateAttr, SecretStr, ValidationError
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA, EnvValue, Text
from mcpmount.config._tables import Tables
from mcpmount.config.servetable._calllog import CALL_LOG_SINKS, CallLogSettings
from mcpmount.config.servetable._quotas import ServeLimits
from mcpmount.config.servetable._serving import ServingSettings
from mcpmount.configfile import Loc, Table, expand, format_loc, problem_lines, unknown_key
from mcpmount.errors import ConfigError
from mcpmount.policy import Policy, read_policy

__all__ = ["MIN_TOKEN_LENGTH", "ServeOAuth", "ServeSettings", "ServeToken", "read_serve"]

MIN_TOKEN_LENGTH = 16
"""The shortest static token accepted: a guessable token is no protection."""


def _long_enough(value: SecretStr) -> SecretStr:
    if len(value.get_secret_value()) < MIN_TOKEN_LENGTH:
        raise PydanticCustomError(
            "mcpmount_short_token", "must be at least {n} characters", {"n": MIN_TOKEN_LENGTH}
        )
    return value


Token = Annotated[EnvValue, AfterValidator(_long_enough)]
"""A static bearer token: a secret of `MIN_TOKEN_LENGTH` characters or more."""


class ServeToken(BaseModel):
    """One static bearer token clients of HTTP ``serve`` may present."""

    model_config = STRICT_DATA

    token: Token
    """The token itself (usually ``"${VAR}"``); a secret."""

    namespaces: list[Text] | None = None
    """The namespaces whose tools, prompts and resources it may see; None: every one."""


class ServeOAuth(BaseModel):
    """An OAuth resource server: JWT access tokens checked against the issuer's keys."""

    model_config = STRICT_DATA

    issuer: Text
    """The authorization server's issuer URL: a token's ``iss`` must be exactly this, and
    the protected resource metadata names it for clients to find."""

    jwks_url: Text
    """Where the issuer's signing keys are (its metadata's ``jwks_uri``)."""

    resource: Text
    """This server's public URL (``https://mcp.example.com/mcp``): a token's ``aud`` must
    name it, and its protected resource metadata is served under it."""

    scopes: list[Text] = []
    """Scopes every token must hold (403 ``insufficient_scope`` otherwise)."""


class ServeSettings(CallLogSettings, ServingSettings):
    """Inbound authentication, allowed hosts, the metrics' listener and token and how a
    graceful stop goes, of HTTP ``serve``, and what every ``serve`` offers its clients (the
    ``[serve]`` table); where it listens is `ServingSettings`', the call log's keys are
    `CallLogSettings`'."""

    model_config = STRICT_DATA

    tokens: dict[str, ServeToken] = {}
    """Named static tokens; the name is shown in logs, never the token."""

    tokens_file: Text | None = None
    """A file of static tokens, one a line, ``TOKEN`` or ``TOKEN ns1,ns2`` (the namespaces
    it may see); ``#`` starts a comment. Read when serving starts. Relative to the config."""

    policy: Text | None = None
    """A file of Cedar policies deciding which tools, prompts and resources each client may
    see and use (`mcpmount.policy`); what one may not is answered as if it did not exist.
    Read and checked with the config (and so at ``check`` and each reload). Relative to the
    config."""

    oauth: ServeOAuth | None = None
    """Accept JWT access tokens of an OAuth authorization server (see `ServeOAuth`)."""

    allowed_hosts: list[Text] = []
    """Host header values clients may use besides loopback ones (``mcp.example.com``, or
    with a port ``mcp.example.com:8443``); requests naming another host are refused (421)."""

    allow_unauthenticated: bool = False
    """Serve HTTP on an address other than loopback without any authentication."""

    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    """Serve ``/metrics`` on a listener of its own at this port (0: the OS chooses), and not
    on the MCP port; None: no such listener."""

    metrics_host: Text = "127.0.0.1"
    """The address the metrics listener binds."""

    metrics_token: Token | None = None
    """The bearer token ``/metrics`` answers (on every listener that serves it), which also
    reads the reasons ``/readyz`` gives; it is no token for ``/mcp``. A secret."""

    call_tool: Literal["every", "sessionless"] = "every"
    """Who sees the ``call_tool`` meta-tool beside ``tool_search`` (listed only when a tool
    is deferred): ``"every"`` client, so that one which calls only the tools its list
    shows and never lists again (a one-shot command line such as the MCP Inspector's)
    can call what it found; or only clients without a session (``"sessionless"``), whose
    list cannot be told that a search grew it, so that a session's list stays smallest."""

    resume_window: float = Field(default=30.0, ge=0, allow_inf_nan=False)
    """Seconds a call of a handshake-era HTTP session waits for its client after the client
    closed the call's stream before its answer, before it is cancelled upstream. A client
    may close the stream and mean to come back, but ``serve`` keeps no events to replay,
    so one that does not is let go here instead of at ``call_timeout``."""
    drain: float = Field(default=5.0, ge=0, le=300)
    """Seconds a stopping HTTP ``serve`` (SIGTERM, SIGINT) keeps serving before it stops
    accepting: ``/readyz`` answers 503 so a load balancer's health check takes it out,
    and every answer closes its connection. It ends sooner once no connection is open.
    Make it longer than your proxy needs to see a replica down (HAProxy: ``inter`` times
    ``fall``); 0 closes at once, and a proxy may then lose a request sent on a pooled
    connection just as it closes."""

    stop_timeout: float = Field(default=10.0, ge=0, le=3600)
    """Seconds the calls in flight get to finish once a stopping HTTP ``serve`` has closed
    its listener. A call still running then is cancelled and answered with an error saying
    its outcome is unknown."""

    limits: ServeLimits = ServeLimits()
    """Rate limits and concurrency caps of tool calls, per principal (`ServeLimits`)."""

    _expanded: tuple[str, ...] = PrivateAttr(default=())
    _rules: Policy | None = PrivateAttr(default=None)

    @property
    def rules(self) -> Policy | None:
        """The policies of `policy`, as read when the config was loaded."""
        return self._rules

    def with_expanded(self, values: Iterable[str]) -> Self:
        """Record ``values`` (expanded from the environment at load time) as secrets."""
        self._expanded = tuple(dict.fromkeys(values))
        return self

    @property
    def authenticated(self) -> bool:
        """Whether any token or OAuth is configured."""
        return bool(self.tokens) or self.tokens_file is not None or self.oauth is not None

    def redact(self, text: str) -> str:
        """Replace every token and every value expanded from the environment with ``***``."""
        tokens = [t.token for t in self.tokens.values()]
        if self.metrics_token is not None:
            tokens.append(self.metrics_token)
        if self.call_log_key is not None:
            tokens.append(self.call_log_key)
        secrets = {*self._expanded, *(t.get_secret_value() for t in tokens)}
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


def read_serve(value: object, tables: Tables) -> ServeSettings:
    """Expand and validate the ``[serve]`` table; the defaults after adding its problems."""
    loc: Loc = ("serve",)
    data = tables.table(value, loc)
    if data is None:
        return ServeSettings()
    secrets: list[tuple[str, str]] = []
    expanded = cast("Table", _expand_all(data, loc, tables, secrets))
    try:
        settings = ServeSettings.model_validate(expanded)
    except ValidationError as exc:
        tables.problems.extend(
            problem_lines(
                exc.errors(include_url=False, include_input=False),
                loc,
                table=tables.word,
                unknown=lambda key: unknown_key(key, ServeSettings.model_fields),
            )
        )
        return ServeSettings()
    files = ("tokens_file", "portfile", "metrics_portfile")
    if paths := {key: getattr(settings, key) for key in files if getattr(settings, key)}:
        # An absolute path replaces the base.
        settings = settings.model_copy(update={k: str(tables.base / v) for k, v in paths.items()})
    if settings.call_log is not None and settings.call_log not in CALL_LOG_SINKS:
        path = str(tables.base / settings.call_log)
        settings = settings.model_copy(update={"call_log": path})
    if settings.policy is not None:
        settings = _with_policy(settings, tables)
    return settings.with_expanded(value for _, value in secrets)


def _with_policy(settings: ServeSettings, tables: Tables) -> ServeSettings:
    """``settings`` with its policy file's path made absolute and its policies read (their
    problems added, each at its line)."""
    path = tables.base / str(settings.policy)  # an absolute path replaces the base
    settings = settings.model_copy(update={"policy": str(path)})
    try:
        settings._rules = read_policy(path)  # pyright: ignore[reportPrivateUsage]
    except ConfigError as exc:
        tables.problems.extend(f"serve.policy: {problem}" for problem in exc.problems)
    return settings


def _expand_all(value: object, loc: Loc, tables: Tables, secrets: list[tuple[str, str]]) -> object:
    """``value`` with the references in every string in it expanded."""
    if isinstance(value, str):
        return expand(value, format_loc(loc), tables.environ, tables.problems, secrets)
    if isinstance(value, list):
        items = cast("list[object]", value)
        return [_expand_all(item, (*loc, i), tables, secrets) for i, item in enumerate(items)]
    if isinstance(value, Mapping):
        table = cast("Mapping[str, object]", value)
        return {k: _expand_all(v, (*loc, k), tables, secrets) for k, v in table.items()}
    return value
