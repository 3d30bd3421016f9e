"""`serve_given`: settings given beside the config file merged into its ``[serve]`` table, in
one place, whoever gives them (``mcpmount serve``'s flags, `RegistryConfig.with_serve`).

Given tokens join the table's, given allowed hosts join its hosts, and
``allow_unauthenticated`` holds if either says so; every other given key replaces the
table's. A value of None is not given. Each given value is checked as the table's are, and
a problem names the key, never the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import ValidationError

from mcpmount.config.servetable._serve import ServeSettings
from mcpmount.errors import ConfigError

__all__ = ["serve_given"]


def serve_given(settings: ServeSettings, given: Mapping[str, object]) -> ServeSettings:
    """``settings`` (the ``[serve]`` table) with ``given`` merged in.

    Raises:
        ConfigError: A given key is unknown or its value invalid (a port beyond 65535, a
            token too short); each problem names the key.
    """
    values = {key: value for key, value in given.items() if value is not None}
    if isinstance(tokens := values.get("tokens"), Mapping):
        values["tokens"] = {**settings.tokens, **cast("Mapping[str, object]", tokens)}
    if isinstance(hosts := values.get("allowed_hosts"), list | tuple):
        values["allowed_hosts"] = [*settings.allowed_hosts, *cast("list[object]", hosts)]
    if "allow_unauthenticated" in values:
        values["allow_unauthenticated"] = values["allow_unauthenticated"] is True or (
            settings.allow_unauthenticated
        )
    try:
        checked = ServeSettings.model_validate(values)
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors()]
        raise ConfigError("serve", problems) from None
    # A copy keeps what the table's reading added: its policy, its secrets.
    return settings.model_copy(update={key: getattr(checked, key) for key in values})
