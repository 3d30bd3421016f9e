"""Approval through `mcpmount serve`: a gated call asks the downstream client first.

The question is a form elicitation naming the server, the tool and its arguments; the
user accepts or declines. A client that cannot be asked (no elicitation) gets a denial
the model can read. A denied call never reaches the server (its ``calls`` counter).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from serve.relay_support import ERAS, EVERY_WAY, Host, served
from serve.serve_support import BEHAVIOUR, asking, wait_for_tool, write_config
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

GATED = 'approve = ["delete_*"]'


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_an_approved_call_runs_and_a_declined_one_never_reaches_the_server(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """The user is asked with the server, tool and arguments; yes runs it, no does not."""
    host = Host()
    config = write_config(tmp_path, asking("ask", extra=GATED))
    async with served(config, tmp_path, transport, mode, **host.callbacks()) as client:
        await wait_for_tool(client, "ask__delete_thing")
        with anyio.fail_after(BEHAVIOUR):
            allowed = await client.call_tool("ask__delete_thing", {"name": "old-notes"})
            host.approve = False
            denied = await client.call_tool("ask__delete_thing", {"name": "thesis"})
            ungated = await client.call_tool("ask__read_thing", {"name": "n"})
            counted = await client.call_tool("ask__calls", {})
    assert text_of(allowed) == "deleted old-notes"
    assert denied.is_error
    assert "denied" in text_of(denied)
    assert "ask__delete_thing" in text_of(denied)
    assert text_of(ungated) == "read n"
    assert '"delete_thing": 1' in text_of(counted)  # the declined call never arrived
    assert len(host.messages) == 2  # one question per gated call, none for the others
    question = host.messages[0]
    assert "'ask'" in question
    assert "'delete_thing'" in question
    assert "ask__delete_thing" in question
    assert "old-notes" in question


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_a_client_that_cannot_be_asked_is_denied_with_a_reason(
    tmp_path: Path, mode: str, version: str
) -> None:
    """No elicitation downstream: the gated call is denied, saying why; nothing is sent."""
    config = write_config(tmp_path, asking("ask", extra=GATED))
    async with served(config, tmp_path, "stdio", mode) as client:
        await wait_for_tool(client, "ask__delete_thing")
        with anyio.fail_after(BEHAVIOUR):
            denied = await client.call_tool("ask__delete_thing", {"name": "thesis"})
            counted = await client.call_tool("ask__calls", {})
    assert denied.is_error
    assert "cannot be asked" in text_of(denied)
    assert "delete_thing" not in text_of(counted)
