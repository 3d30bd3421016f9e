"""Every key a server inherits from the registry is resolved by its one view,
``spec.effective(settings)``: none is picked between the two levels anywhere else."""

from __future__ import annotations

import dataclasses
from typing import cast

import pytest

from mcpmount.config import (
    EffectiveSettings,
    HttpServer,
    RegistrySettings,
    ServerBase,
    StdioServer,
)

REGISTRY: dict[str, object] = {
    "startup_timeout": 7.0,
    "call_timeout": 9.0,
    "roots": ["file:///srv/a"],
    "max_tools": 11,
    "hidden_text": "refuse",
    "start": "lazy",
    "manifest_ttl": 13.0,
    "idle_timeout": 17.0,
    "sandbox": "prefer",
    "block_secrets": True,
}
"""Registry values unlike the defaults, so that inheriting them shows."""

OWN: dict[str, object] = {
    "startup_timeout": 1.0,
    "call_timeout": 2.0,
    "roots": ["file:///srv/b"],
    "max_tools": 3,
    "hidden_text": "strip",
    "start": "eager",
    "manifest_ttl": 4.0,
    "idle_timeout": 5.0,
    "sandbox": False,
    "block_secrets": False,
}
"""A server's values unlike the registry's: false ones too, which must still win."""


def inherited() -> set[str]:
    """The keys both levels declare: the registry's and any server kind's."""
    registry = set(RegistrySettings.model_fields)
    kinds: list[type[ServerBase]] = [ServerBase, StdioServer, HttpServer]
    return {key for kind in kinds for key in kind.model_fields if key in registry}


def frozen(value: object) -> object:
    """``value`` as the view holds it: a list as a tuple."""
    return tuple(cast("list[object]", value)) if isinstance(value, list) else value


def test_every_key_at_both_levels_is_in_the_view() -> None:
    """A key added at both levels but not to the view, or to the view and one level only,
    fails here (the fields are read from the models, never listed by hand)."""
    view = {field.name for field in dataclasses.fields(EffectiveSettings)}
    assert view == inherited()
    assert len(view) >= 17


def test_each_key_is_the_servers_own_else_the_registrys() -> None:
    """For every inherited key: unset, the view holds the registry's value; set (to a
    value unlike the registry's, false included), the server's."""
    settings = RegistrySettings.model_validate(REGISTRY)
    plain = StdioServer(command="srv").effective(settings)
    for key in inherited():
        assert getattr(plain, key) == frozen(getattr(settings, key)), key
    own = StdioServer.model_validate({"command": "srv", **OWN})
    mine = own.effective(settings)
    for key in OWN:
        assert getattr(mine, key) == frozen(getattr(own, key)), key
    assert mine.sandbox is own.sandbox  # false is read as a table that is not enabled
    url = HttpServer(url="https://example.com/mcp").effective(settings)
    assert url.sandbox == "prefer"  # a url server has no sandbox of its own


def test_the_view_is_frozen() -> None:
    """What a server runs with cannot be changed behind its back, lists included."""
    view = StdioServer(command="srv").effective(RegistrySettings(roots=["/srv"]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.call_timeout = 1.0  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(view.roots, tuple)
