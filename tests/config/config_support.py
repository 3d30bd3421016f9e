"""Helpers for the config tests: write a config file, load it, and pick its servers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from mcpmount.config import HttpServer, RegistryConfig, StdioServer, load_config
from mcpmount.errors import ConfigError

Write = Callable[[str, str], Path]
"""The `write` fixture: write a config file (dedented) into tmp_path and return its path."""

SECRET = "s3cr3t-value"


def problems_of(path: Path, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Load ``path``, expecting a ConfigError for it, and return its problems."""
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={} if environ is None else environ)
    assert caught.value.path == str(path)
    return caught.value.problems


def stdio(config: RegistryConfig, namespace: str) -> StdioServer:
    spec = config.servers[namespace]
    assert isinstance(spec, StdioServer)
    return spec


def http(config: RegistryConfig, namespace: str) -> HttpServer:
    spec = config.servers[namespace]
    assert isinstance(spec, HttpServer)
    return spec
