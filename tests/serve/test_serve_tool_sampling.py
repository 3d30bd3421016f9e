"""Tool-enabled sampling through `mcpmount serve`: offered upstream, relayed to a client that
declared ``sampling.tools``, and refused, saying why, for one that did not."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import MCPError
from mcp.client import ClientRequestContext

from serve.relay_support import ERAS, EVERY_WAY, served
from serve.serve_support import BEHAVIOUR, asking, wait_for_tool, write_config
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

TOOLS = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())


class Model:
    """A downstream client's model: calls the first tool it is offered; records what it got."""

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    async def sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        tools = params.tools or []
        self.offered.append([tool.name for tool in tools])
        content: mcp_types.SamplingMessageContentBlock = mcp_types.TextContent(
            type="text", text="no tools"
        )
        if tools:
            content = mcp_types.ToolUseContent(name=tools[0].name, id="use-1", input={})
        return mcp_types.CreateMessageResultWithTools(
            role="assistant", content=[content], model="host", stop_reason="toolUse"
        )


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_a_client_that_samples_with_tools_gets_the_tools(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    config = write_config(tmp_path, asking("ask"))
    model = Model()
    async with served(
        config,
        tmp_path,
        transport,
        mode,
        sampling_callback=model.sample,
        sampling_capabilities=TOOLS,
    ) as client:
        await wait_for_tool(client, "ask__sample_tools")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            result = await client.call_tool("ask__sample_tools", {"prompt": "define x"})
    assert text_of(result) == "model chose: lookup"
    assert model.offered == [["lookup"]]


@pytest.mark.parametrize("upstream", ["auto", "legacy"])
@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_client_that_samples_without_tools_is_not_sent_them(
    tmp_path: Path, mode: str, version: str, upstream: str
) -> None:
    """The request never reaches the client; the call fails with the relay's reason."""
    config = write_config(tmp_path, asking("ask", extra=f'protocol = "{upstream}"'))
    model = Model()
    async with served(config, tmp_path, "stdio", mode, sampling_callback=model.sample) as client:
        await wait_for_tool(client, "ask__sample_tools")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR), pytest.raises(MCPError) as raised:
            await client.call_tool("ask__sample_tools", {"prompt": "define x"})
    assert "cannot sample with tools" in raised.value.message
    assert "sampling.tools" in raised.value.message
    assert model.offered == []
