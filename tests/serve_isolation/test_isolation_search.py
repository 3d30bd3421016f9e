"""``tool_search`` tells a limited token nothing of hidden tools, and conversations are each
token's own.

A search naming a hidden tool (``select:``), or a word only hidden tools have (``+word``,
plain words), is answered as one naming nothing, sessionless and in a session, which is
told of no change. Two tokens sending the same ``Mcp-Conversation-Id`` keep separate lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_compare_support import blank
from serve_isolation.isolation_support import (
    FULL,
    HIDDEN,
    LIMITED,
    NOWHERE,
    PUB,
    SESSIONLESS,
    Principal,
    Shared,
    answer,
    on_shared_eras,
    principal,
    serving,
)

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

SEARCHES = [
    ("select:{}__archive_lookup", HIDDEN, NOWHERE),
    ("select:{}__quokka_census", HIDDEN, NOWHERE),
    ("+{}", "quokka", "narwhal"),
    ("{} census", "quokka", "narwhal"),
]
"""A query naming something hidden, and the same query naming nothing."""


async def _search(who: Principal, query: str) -> dict[str, Any]:
    return await answer(who.client.call_tool("tool_search", {"query": query}))


@on_shared_eras
async def test_a_search_for_a_hidden_tool_is_answered_as_one_for_nothing(
    shared: Shared, mode: str
) -> None:
    """Same results (no ``call_with`` note for a hidden find), and a session is told of no
    change by either search; it is told when it finds a tool of its own."""
    session = mode == "legacy" and not shared.stateless
    async with principal(shared.url, LIMITED, mode=mode) as limited:
        with anyio.fail_after(BEHAVIOUR):
            await limited.client.list_tools()  # a session that listed is told of changes
        answered = {
            query: (
                blank(await _search(limited, query.format(hidden)), hidden),
                blank(await _search(limited, query.format(missing)), missing),
            )
            for query, hidden, missing in SEARCHES
        }
        changed = limited.told(mcp_types.ToolListChangedNotification)
        found = await _search(limited, f"select:{PUB}__archive_lookup")
        if session:  # the control: a find of its own is told, after anything sent before
            with anyio.fail_after(BEHAVIOUR):
                await limited.wait_told(mcp_types.ToolListChangedNotification, changed + 1)
    differing = {query: pair for query, pair in answered.items() if pair[0] != pair[1]}
    assert differing == {}
    assert limited.tee.text().count("notifications/tools/list_changed") == session
    assert found["result"]["structuredContent"]["tools"][0]["name"] == f"{PUB}__archive_lookup"


def _names(result: mcp_types.ListToolsResult) -> list[str]:
    return [tool.name for tool in result.tools]


@pytest.mark.parametrize("flags", SESSIONLESS)
async def test_a_conversation_id_keys_each_tokens_own_list(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """Both tokens send ``Mcp-Conversation-Id: shared``: what each one's searches find joins
    its own list only (the limited one's hidden find joins none)."""
    conversation = "shared"
    async with (
        serving(tmp_path, *flags) as url,
        principal(url, FULL, mode="auto", conversation=conversation) as full,
        principal(url, LIMITED, mode="auto", conversation=conversation) as limited,
    ):
        with anyio.fail_after(BEHAVIOUR):
            query = f"select:{PUB}__archive_lookup,{HIDDEN}__quokka_census"
            await limited.client.call_tool("tool_search", {"query": query})
            full_after_limited = _names(await full.client.list_tools())
            query = f"select:{PUB}__ledger_export,{HIDDEN}__archive_lookup"
            await full.client.call_tool("tool_search", {"query": query})
            limited_after_full = _names(await limited.client.list_tools())
            full_after_both = _names(await full.client.list_tools())
    assert [name for name in full_after_limited if "archive" in name or "quokka" in name] == []
    assert f"{PUB}__archive_lookup" in limited_after_full  # its own find
    assert [name for name in limited_after_full if "ledger" in name or HIDDEN in name] == []
    assert {f"{PUB}__ledger_export", f"{HIDDEN}__archive_lookup"} <= set(full_after_both)
    assert f"{HIDDEN}__quokka_census" not in full_after_both
