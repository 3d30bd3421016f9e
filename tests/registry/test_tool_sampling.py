"""Tool-enabled sampling: ``sampling.tools`` is offered upstream only when the host says its
sampling handler supports it (`ClientHandlers.sampling_capability`)."""

from __future__ import annotations

from typing import Literal

import anyio
import mcp_types
import pytest

from asking_support import BEHAVIOUR, asking
from mcpmount.errors import UpstreamError
from mcpmount.handlers import Asker, ClientHandlers
from mcpmount.registry import Registry
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

Era = Literal["auto", "legacy"]
ERAS: list[Era] = ["auto", "legacy"]

TOOLS = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())


async def choose_a_tool(
    asker: Asker, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.CreateMessageResultWithTools:
    """A model that calls the first tool it is offered (or says it has none)."""
    if not params.tools:
        content: mcp_types.SamplingMessageContentBlock = mcp_types.TextContent(
            type="text", text="no tools"
        )
    else:
        content = mcp_types.ToolUseContent(name=params.tools[0].name, id="use-1", input={})
    return mcp_types.CreateMessageResultWithTools(
        role="assistant", content=[content], model="m", stop_reason="toolUse"
    )


@pytest.mark.parametrize("era", ERAS)
async def test_a_handler_that_declares_tools_gets_the_tools(era: Era) -> None:
    handlers = ClientHandlers(sampling=choose_a_tool, sampling_capability=TOOLS)
    async with Registry(handlers=handlers) as registry:
        await registry.mount("a", asking(protocol=era))
        with anyio.fail_after(BEHAVIOUR):
            result = await registry.call("a__sample_tools", {"prompt": "define x"})
    assert text_of(result) == "model chose: lookup"


@pytest.mark.parametrize("era", ERAS)
async def test_without_the_declaration_the_server_cannot_sample_with_tools(era: Era) -> None:
    """The server's SDK sends tools only to a client that declared ``sampling.tools``."""
    asked: list[Asker] = []

    async def sample(
        asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        asked.append(asker)
        return await choose_a_tool(asker, params)

    async with Registry(handlers=ClientHandlers(sampling=sample)) as registry:
        await registry.mount("a", asking(protocol=era))
        with anyio.fail_after(BEHAVIOUR), pytest.raises(UpstreamError) as raised:
            await registry.call("a__sample_tools", {"prompt": "define x"})
    assert "sampling.tools" in raised.value.upstream_message
    assert asked == []
