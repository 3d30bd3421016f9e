"""Hidden characters in what a server lists never reach the model: ``hidden_text = "strip"``
shows exactly the listing without them (the same server planting none is the control),
once warned of by code point; ``"refuse"`` refuses the server by name. Live lists,
re-lists after a change and cached manifests all pass the same cleaner.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

from mcpmount.audit import hidden_in
from mcpmount.config import RegistrySettings
from mcpmount.errors import ToolListError
from mcpmount.manifests import spec_key
from mcpmount.registry import Registry
from support import CHANGING, SERVERS, stdio_spec

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

POISONED = str(SERVERS / "poisoned_server.py")


def _shown(registry: Registry, server: str) -> tuple[list[dict[str, object]], list[dict[str, Any]]]:
    """What the model is shown of ``server``: its tools and prompts, less their names."""
    tools = [
        {k: v for k, v in tool.to_dict().items() if k != "name"}
        for tool in registry.mounted_tools()
        if tool.server == server
    ]
    prompts = [
        p.model_dump(mode="json", exclude={"name"})
        for p in registry.prompts()
        if p.name.startswith(f"{server}__")
    ]
    return tools, prompts


async def test_strip_shows_the_model_exactly_the_listing_without_its_hidden_characters() -> None:
    """The poisoned server, stripped, lists what the same server planting nothing lists."""
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("p", stdio_spec(POISONED))
        await registry.mount("control", stdio_spec(POISONED, "--no-hidden"))
        shown = _shown(registry, "p")
        assert shown == _shown(registry, "control")
        assert shown[0]
        assert shown[1]
        assert not hidden_in(json.dumps(shown, ensure_ascii=False))
        titles = {t.raw_name: t.definition.title for t in registry.mounted_tools()}
        assert titles["read_notes"] == "Read notes txt.exe"


async def test_strip_warns_once_per_server_by_code_point_never_the_hidden_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One warning names the server, each tool and prompt, and what was found as code
    points; the sentence the tag characters spell is not in it."""
    caplog.set_level(logging.WARNING, logger="mcpmount")
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("p", stdio_spec(POISONED))
        (row,) = registry.status()
    [warning] = [r.getMessage() for r in caplog.records if "hidden characters" in r.getMessage()]
    assert warning.startswith("server 'p': hidden characters stripped")
    for piece in (
        "tool 'add': 35 tag characters (U+E0041 U+E006C U+E0073 U+E006F ...)",
        "tool 'read_notes': 1 bidi control (U+202E)",
        "tool 'search_notes': 1 invisible character (U+200B)",
        "tool 'format_note': 2 control characters (U+001B)",
        "prompt 'summarize': 4 tag characters",
        'hidden_text = "refuse"',
    ):
        assert piece in warning
    assert "send the user" not in warning
    assert not [c for c in warning if unicodedata.category(c) in ("Cc", "Cf")]
    assert any("hidden characters stripped from tool 'add'" in note for note in row.notes)


async def test_refuse_refuses_the_server_naming_it_the_tool_and_how_to_accept() -> None:
    """All or nothing: nothing of it is mounted; the control, planting none, mounts."""
    async with Registry(RegistrySettings(hidden_text="refuse")) as registry:
        with pytest.raises(ToolListError) as caught:
            await registry.mount("p", stdio_spec(POISONED))
        message = str(caught.value)
        assert caught.value.server == "p"
        assert "tool 'add'" in message
        assert "35 tag characters (U+E0041" in message
        assert 'set hidden_text = "strip" to mount it' in message
        assert registry.mounted_tools() == []
        await registry.mount("control", stdio_spec(POISONED, "--no-hidden"))
        assert len(registry.mounted_tools()) == 8


async def test_a_server_of_its_own_policy_overrides_the_registrys() -> None:
    """``[servers.x] hidden_text = "strip"`` mounts under a registry that refuses, and
    ``"refuse"`` refuses under one that strips."""
    async with Registry(RegistrySettings(hidden_text="refuse")) as registry:
        await registry.mount("p", stdio_spec(POISONED, hidden_text="strip"))
    async with Registry(RegistrySettings()) as registry:
        with pytest.raises(ToolListError, match="hidden characters"):
            await registry.mount("p", stdio_spec(POISONED, hidden_text="refuse"))


async def test_a_description_changed_at_run_time_is_stripped_too() -> None:
    """A re-list after ``tools/list_changed`` passes the same cleaner."""
    async with Registry(RegistrySettings()) as registry:
        await registry.mount("c", stdio_spec(CHANGING))
        await registry.call("c__redescribe", {"text": "Now\u200b with\U000e0041 more."})
        with anyio.fail_after(20):
            while registry.get("c__base").definition.description != "Now with more.":
                await anyio.sleep(0.05)
        [row] = registry.status()
        assert any("tool 'base': 1 tag character (U+E0041)" in note for note in row.notes)


async def test_a_cached_manifest_is_stripped_too(tmp_path: Path) -> None:
    """A cache entry is untrusted (a shared Redis, a file): the lists published from it
    are cleaned like live ones, before the server is started."""
    settings = RegistrySettings(cache_dir=str(tmp_path / "cache"), start="lazy")
    spec = stdio_spec(POISONED, "--no-hidden")
    async with Registry(settings) as registry:
        await registry.mount("p", spec)  # no entry yet: mounted live, and cached
    entry = tmp_path / "cache" / f"{spec_key(spec)}.json"
    body = json.loads(entry.read_bytes())
    [add] = [tool for tool in body["tools"] if tool["name"] == "add"]
    add["description"] = "Add two numbers.\U000e0041\u202e"
    entry.write_text(json.dumps(body))
    async with Registry(settings) as registry:
        await registry.mount("p", spec)
        [row] = registry.status()
        assert row.cached
        tool: mcp_types.Tool = registry.get("p__add").definition
        assert tool.description == "Add two numbers."
