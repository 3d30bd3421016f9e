"""invalid_names = "sanitize": a raw name that breaks the MCP name grammar (SEP-986) is
mounted under a valid, deterministic public name, and calls reach the server under the
exact raw name.

Every test requests ``no_leaks``: after it, nothing the test spawned is alive and no fd,
thread or task is left over.
"""

from __future__ import annotations

import json
import re
from typing import Literal

import pytest
import xxhash

from mcpmount import naming
from mcpmount.errors import ToolListError
from mcpmount.registry import Registry
from support import fixture, record_pids, text_of

pytestmark = pytest.mark.usefixtures("no_leaks")

MODEL_API_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What model APIs accept (README: names always fit model APIs)."""

INVALID = ["read file", "a/b/c", "café", "日本語", "", "   ", " trimmed ", "get file", "get/file"]
"""Names that break SEP-986: spaces, slashes, non-ASCII, empty (or empty after trimming)."""


def _raw_tools(names: list[str]) -> str:
    return json.dumps([{"name": name, "inputSchema": {"type": "object"}} for name in names])


def _suffix(namespace: str, raw: str) -> str:
    return "_" + xxhash.xxh3_64_hexdigest(f"{namespace}\0{raw}".encode())[:8]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_invalid_names_get_valid_public_names_and_calls_use_the_raw_name(
    protocol: Literal["auto", "legacy"],
) -> None:
    """Each invalid name fits model APIs, all are distinct, and each call reaches the server
    under its raw name (the low-level fixture echoes the name it was called with)."""
    names = [*INVALID, "get.file", "get_file"]
    spec = fixture("--raw-tools", _raw_tools(names), invalid_names="sanitize", protocol=protocol)
    async with Registry() as registry:
        await registry.mount("s", spec)
        record_pids(registry)
        mounted = {tool.raw_name: tool.name for tool in registry.mounted_tools()}
        assert sorted(mounted) == sorted(names)
        assert len(set(mounted.values())) == len(names)
        for raw, public in mounted.items():
            assert MODEL_API_NAME.match(public), public
            result = await registry.call(public, {"k": 1})
            assert text_of(result) == f'{raw} {{"k": 1}}'
        assert {tool.name for tool in registry.tools()} == set(mounted.values())


async def test_sanitizing_trims_transliterates_and_suffixes_with_the_raw_names_hash() -> None:
    """The suffix is the same xxh3 rule as any changed name, over the untrimmed raw name."""
    names = ["café", " trimmed ", "a/b/c", "", "get file", "get.file", "get_file"]
    spec = fixture("--raw-tools", _raw_tools(names), invalid_names="sanitize")
    async with Registry() as registry:
        await registry.mount("s", spec)
        record_pids(registry)
        mounted = {tool.raw_name: tool.name for tool in registry.mounted_tools()}
    assert mounted == {
        "café": "s__cafe" + _suffix("s", "café"),
        " trimmed ": "s__trimmed" + _suffix("s", " trimmed "),
        "a/b/c": "s__a_b_c" + _suffix("s", "a/b/c"),
        "": "s__" + _suffix("s", ""),
        "get file": "s__get_file" + _suffix("s", "get file"),
        "get.file": "s__get_file" + _suffix("s", "get.file"),
        "get_file": "s__get_file",
    }
    assert all(name == naming.public_name("s", raw) for raw, name in mounted.items())


async def test_the_default_policy_still_refuses_an_invalid_name_and_says_how_to_sanitize() -> None:
    """Sanitizing is opt-in: by default an invalid raw name refuses the whole server."""
    async with Registry() as registry:
        with pytest.raises(ToolListError, match='invalid_names = "sanitize"') as caught:
            await registry.mount("s", fixture("--raw-tools", _raw_tools(["ok", "read file"])))
        assert caught.value.server == "s"
        assert caught.value.tool == "read file"
        assert registry.mounted_tools() == []


async def test_a_sanitized_name_that_clashes_with_another_tool_refuses_the_server() -> None:
    """A raw name equal to another's sanitized-and-suffixed form is still a clash, never a
    silent shadow; the error names both raw names."""
    clash = naming.public_name("s", "read file").removeprefix("s__")
    spec = fixture("--raw-tools", _raw_tools(["read file", clash]), invalid_names="sanitize")
    async with Registry() as registry:
        with pytest.raises(ToolListError, match="'read file'") as caught:
            await registry.mount("s", spec)
        assert clash in str(caught.value)
        assert registry.mounted_tools() == []
