"""A limited token cannot tell a hidden namespace from one that is not mounted, by anything
it asks or anything it is sent, in both eras, with sessions and with ``--stateless``.

Real `mcpmount serve` processes over HTTP with a tokens file, real SDK Clients: the full
token's client uses everything of the hidden server meanwhile, and every byte the limited
client received is kept (`isolation_support.Tee`) and searched.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from isolation_probes import exercise_hidden, listening, probes

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_compare_support import blank, close_to, leaks, suggestions
from serve_isolation.isolation_support import (
    ERAS,
    FULL,
    HIDDEN,
    LIMITED,
    MODERN,
    PUB,
    PUB_TOOLS,
    Principal,
    answer,
    principal,
    serving,
    uri,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(180),  # three servers and a hundred requests, on a loaded machine
]


async def _list_everything(who: Principal) -> list[str]:
    """Every name and URI the lists show ``who``."""
    client = who.client
    shown = [t.name for t in (await client.list_tools()).tools]
    shown += [p.name for p in (await client.list_prompts()).prompts]
    shown += [r.uri for r in (await client.list_resources()).resources]
    templates = (await client.list_resource_templates()).resource_templates
    return shown + [t.uri_template for t in templates]


async def _what_it_may_see_reaches_it(full: Principal, limited: Principal, notified: bool) -> None:
    """The controls: the visible server's log message, list change and resource update reach
    the limited client; once the update came, so did everything sent to it before."""
    with anyio.fail_after(BEHAVIOUR):
        await limited.client.call_tool(f"{PUB}__log", {"text": "public log"})
        if notified or limited.client.protocol_version == MODERN:
            await limited.wait_for_log("pub log warning")
        changes = full.told(mcp_types.ToolListChangedNotification)
        await limited.client.call_tool(f"{PUB}__grow", {"name": "pub_grown"})
        if notified:
            await full.wait_told(mcp_types.ToolListChangedNotification, changes + 1)
        await limited.client.call_tool(f"{PUB}__touch", {"uri": "memo://one"})
        if notified:
            await limited.wait_told(mcp_types.ResourceUpdatedNotification)


def test_each_probe_and_its_counterpart_have_the_same_visible_close_matches() -> None:
    """The premise of the comparison: among visible names, the registry's suggestions for a
    hidden name and for its counterpart are the same."""
    visible = (*PUB_TOOLS, f"{PUB}__pub_grown", f"{PUB}__greet", "tool_search", "call_tool")
    for probe in probes(MODERN):
        assert close_to(probe.hidden, visible) == close_to(probe.missing, visible), probe.label


@pytest.mark.parametrize(("mode", "flags"), ERAS)
async def test_a_hidden_name_is_answered_as_a_missing_one_and_nothing_hidden_is_received(
    tmp_path: Path, mode: str, flags: tuple[str, ...]
) -> None:
    """Each request naming something hidden is answered as the same request naming it where
    nothing is mounted; no byte the limited client received names the hidden namespace, its
    tools, prompts or private text, and it is told of no change of the hidden server."""
    modern = mode == "auto"
    notified = not flags  # a handshake-era session, or a 2026-07-28 listen stream
    session = notified and not modern
    level: mcp_types.LoggingLevel | None = "debug" if modern else None  # the 2026 opt-in
    async with (
        serving(tmp_path, *flags) as url,
        principal(url, FULL, mode=mode, log_level=level) as full,
        principal(url, LIMITED, mode=mode, log_level=level) as limited,
    ):
        with anyio.fail_after(BEHAVIOUR):
            before = await _list_everything(limited)
            if not modern:
                await limited.set_level("debug")
            if session:
                await limited.subscribe(uri(PUB))
            # Its own finds first (a session is told once): the probes then grow nothing.
            own = f"select:{PUB}__archive_lookup,{PUB}__ledger_export"
            await limited.client.call_tool("tool_search", {"query": own})
        async with listening(full, uri(HIDDEN)), listening(limited, uri(PUB), uri(HIDDEN)):
            await exercise_hidden(full, notified=notified)
            answered = [
                (
                    probe,
                    await answer(probe.request(limited.client, probe.hidden)),
                    await answer(probe.request(limited.client, probe.missing)),
                )
                for probe in probes(limited.client.protocol_version)
            ]
            with anyio.fail_after(BEHAVIOUR):
                after = await _list_everything(limited)
            await _what_it_may_see_reaches_it(full, limited, notified)
    differing = {
        probe.label: (hidden, missing)
        for probe, hidden, missing in answered
        if blank(hidden, probe.sent(probe.hidden), probe.hidden)
        != blank(missing, probe.sent(probe.missing), probe.missing)
    }
    assert list(differing) == [], differing
    # A resource that does not exist, as the client's era says it (2026-07-28: -32602).
    not_found = mcp_types.INVALID_PARAMS if modern else -32002
    reads = [hidden for probe, hidden, _ in answered if probe.label.startswith("resources/read")]
    assert [read["error"]["code"] for read in reads] == [not_found, not_found]
    for _, hidden, _ in answered:
        message = str(hidden.get("error", {}).get("message", ""))
        assert all(name.startswith(f"{PUB}__") for name in suggestions(message)), message
    # What the client sent itself may be quoted back (a search's "unknown tool names" hint),
    # for the hidden name and the missing one alike.
    asked = [(probe, name) for probe, _, _ in answered for name in (probe.hidden, probe.missing)]
    sent = [probe.sent(name) for probe, name in asked] + [name for _, name in asked]
    assert leaks(limited.tee.text(), *sent) == []
    assert [name for name in before + after if HIDDEN in name] == []
    # Told of its own finds (a session) and of pub's change, never of the hidden server's.
    told = limited.tee.text().count("notifications/tools/list_changed")
    assert told == session + notified
