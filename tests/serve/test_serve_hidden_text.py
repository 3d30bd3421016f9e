"""Through `mcpmount serve`, a stock client is shown no hidden character a server planted
in its tools or prompts (``hidden_text = "strip"``, the default): exactly what the same
server planting none lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpmount.audit import hidden_in
from serve.serve_support import served_stdio, wait_for_tool, write_config
from support import SERVERS, script_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


def poisoned(name: str, *flags: str) -> str:
    return script_server(name, str(SERVERS / "poisoned_server.py"), *flags)


async def test_served_tools_and_prompts_carry_no_hidden_character(tmp_path: Path) -> None:
    """Every string the client lists is free of hidden characters, and each definition of
    ``p`` equals the control's (``--no-hidden``) but for its name."""
    config = write_config(tmp_path, poisoned("p"), poisoned("control", "--no-hidden"))
    async with served_stdio(config, tmp_path) as client:
        await wait_for_tool(client, "p__add")
        await wait_for_tool(client, "control__add")
        tools = (await client.list_tools()).tools
        prompts = (await client.list_prompts()).prompts
    listed = [t.model_dump(mode="json", by_alias=True) for t in [*tools, *prompts]]
    assert not hidden_in(json.dumps(listed, ensure_ascii=False))
    by_name = {t.name: t.model_dump(mode="json", exclude={"name"}) for t in [*tools, *prompts]}
    shown = {name[3:]: body for name, body in by_name.items() if name.startswith("p__")}
    control = {name[9:]: body for name, body in by_name.items() if name.startswith("control__")}
    assert len(shown) == 9  # 8 tools and a prompt
    assert shown == control
    assert shown["add"]["description"] == "Add two numbers."
