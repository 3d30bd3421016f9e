"""What a model reads of a failed call through ``serve`` speaks of tools, never of the
library's calls (``registry.tools()``) nor of the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import MCPError

from serve.serve_support import served_stdio
from support import fixture_server, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


async def test_an_unknown_tool_is_told_to_list_or_search_the_tools(tmp_path: Path) -> None:
    config = write_config(tmp_path, fixture_server("one"))
    async with served_stdio(config, tmp_path) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("zzzz", {})
    said = caught.value.error.message
    assert said.startswith("no mounted tool is named 'zzzz'; list the tools")
    assert "tool_search" in said
    assert "registry." not in said
    assert "mcpmount tools" not in said
