"""The keywords `serve` took before its settings had their home in ``[serve]``: still read.

``serve(config, transport="http", port=0)`` is ``serve(config.with_serve(transport="http",
port=0))`` with a `DeprecationWarning` naming each key, so that code written against the
old signature runs on; they merge as ``mcpmount serve``'s flags do
(`RegistryConfig.with_serve`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypedDict

from mcpmount.config import (
    RegistryConfig,
    ServeOAuth,
    ServeToken,
    Transport,
    warn_deprecated,
)

__all__ = ["OldKeywords", "with_old_keywords"]


class OldKeywords(TypedDict, total=False):
    """`serve`'s old keywords, each now the ``[serve]`` key of its name."""

    transport: Transport
    host: str
    port: int
    stateless: bool
    json_response: bool
    watch: bool
    shared_state: str | None
    tokens: Mapping[str, ServeToken] | None
    tokens_file: str | os.PathLike[str] | None
    oauth: ServeOAuth | None
    allowed_hosts: Sequence[str]
    allow_unauthenticated: bool
    metrics_port: int | None
    metrics_host: str | None
    metrics_token: str | None
    call_log: str | None


def with_old_keywords(config: RegistryConfig, old: OldKeywords) -> RegistryConfig:
    """``config`` with the old keywords given merged into its ``[serve]`` settings, after a
    `DeprecationWarning` naming them.

    Raises:
        ConfigError: A value is invalid; the problem names the key.
    """
    if not old:
        return config
    keys = ", ".join(f"{key}=" for key in old)
    warn_deprecated(
        f"serve({keys}...) is deprecated: these are [serve] keys of the config now; give "
        f"them with serve(config.with_serve({keys}...))"
    )
    given: dict[str, object] = dict(old)
    if (path := old.get("tokens_file")) is not None:
        given["tokens_file"] = os.fspath(path)
    if (hosts := old.get("allowed_hosts")) is not None:
        given["allowed_hosts"] = list(hosts)
    return config.with_serve(**given)
