"""One guard at the boundary, both ways, through a real `mcpmount serve` and the SDK's Client,
in both protocol eras: every request kind carrying another server's secret is refused (an
error the model reads, naming whose secret and where, never the value: not in the error,
not in serve's log), and every kind of message a server sends reaches the client with
every known secret redacted, listings included.

``github`` holds a GitHub token; ``planter`` (tests/servers/secret_planter_server.py) has it
planted in everything it says; ``asker`` (tests/servers/asking_server.py) asks a form
question that the client answers with the token.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client import ClientRequestContext

from secret_support import assert_planted_redacted
from serve import serve_support
from serve.relay_support import ERAS, Host, served
from serve.serve_support import BEHAVIOUR, wait_for_tool, write_config
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

GH_TOKEN = "ghp_" + "Vd3Kq8Zr" * 4 + "Mn6y"
SHOWN = "[redacted: secret of server 'github']"


def servers(tmp_path: Path, era: str) -> str:
    plant = tmp_path / "plant"
    plant.write_text(GH_TOKEN)
    protocol = "auto" if era == "auto" else "legacy"

    def table(name: str, script: str, env: str) -> str:
        args = json.dumps([str(SERVERS / script)])
        return (
            f'[servers.{name}]\ncommand = "{sys.executable}"\nargs = {args}\n'
            f'env = {{ {env} }}\nprotocol = "{protocol}"\n'
        )

    return write_config(
        tmp_path,
        table("github", "token_thief_server.py", f'TOKEN = "{GH_TOKEN}"'),
        table("planter", "secret_planter_server.py", f'PLANT_FILE = "{plant}"'),
        table("asker", "asking_server.py", 'MODE = "plain"'),
    )


class Thief(Host):
    """A client talked into answering a form with the GitHub token."""

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.messages.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"answer": GH_TOKEN})


async def refusal(request: Any) -> str:
    """What the client is told of a refused request: an error result's text, or the
    JSON-RPC error's message."""
    try:
        result = await request
    except MCPError as exc:
        return exc.error.message
    assert isinstance(result, mcp_types.CallToolResult)
    assert result.is_error
    return text_of(result)


async def template(client: Client) -> str:
    listed = await client.list_resource_templates()
    [found] = [t.uri_template for t in listed.resource_templates if "items" in t.uri_template]
    return found


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_every_request_kind_is_refused_and_every_message_redacted_through_serve(
    tmp_path: Path, mode: str, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def verbose(config: str, *flags: str) -> list[str]:  # so that serve logs each refusal
        return [sys.executable, "-m", "mcpmount", "-v", "serve", config, *flags]

    monkeypatch.setattr(serve_support, "serve_command", verbose)
    host = Thief()
    options = host.callbacks()
    if mode == "auto":
        options["log_level"] = "debug"  # the 2026-07-28 opt-in, on every request
    reported: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(message)

    async with served(servers(tmp_path, mode), tmp_path, "stdio", mode, **options) as client:
        await wait_for_tool(client, "planter__received")
        await wait_for_tool(client, "asker__elicit")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR * 3):
            if mode == "legacy":
                level = mcp_types.SetLevelRequestParams(level="debug")
                request = mcp_types.SetLevelRequest(params=level)
                await client.session.send_request(request, mcp_types.EmptyResult)
            uri = await template(client)
            item = mcp_types.ResourceTemplateReference(type="ref/resource", uri=uri)
            prompt = mcp_types.PromptReference(type="ref/prompt", name="planter__greet")
            context = {"other": GH_TOKEN}
            refused = [
                await refusal(client.call_tool("planter__echo", {"text": GH_TOKEN})),
                await refusal(client.call_tool("planter__echo", {"text": "x", GH_TOKEN: "k"})),
                await refusal(client.get_prompt("planter__greet", {"name": GH_TOKEN})),
                await refusal(client.read_resource(uri.replace("{item}", GH_TOKEN))),
                await refusal(client.complete(item, {"name": "item", "value": GH_TOKEN})),
                await refusal(client.complete(prompt, {"name": "name", "value": "a"}, context)),
            ]
            asked = await refusal(client.call_tool("asker__elicit", {"question": "token?"}))
            got = json.loads(text_of(await client.call_tool("planter__received", {})))
            leak = await client.call_tool("planter__leak", {}, progress_callback=on_progress)
            said: list[Any] = [
                leak,
                await client.get_prompt("planter__greet", {"name": "ann"}),
                await client.read_resource("mcpmount://planter/memo://note"),
                await client.complete(prompt, {"name": "name", "value": "a"}),
            ]
            blob = await client.read_resource("mcpmount://planter/memo://blob")
            listings: list[Any] = [
                await client.list_tools(),
                await client.list_prompts(),
                await client.list_resources(),
            ]
            while not host.logs:
                await anyio.sleep(0.05)
    served_log = (tmp_path / "serve.log").read_text()
    assert "call of 'planter__echo' failed" in served_log  # serve logged the refusals
    assert got == []  # nothing refused reached the planter
    for text in refused:
        assert "secret of server 'github'" in text, text
        assert GH_TOKEN not in text
    assert "a key of the arguments" in refused[1]
    assert "the answer carries a secret of server 'github'" in asked
    assert GH_TOKEN not in asked
    assert reported == [f"progress {SHOWN}"]
    assert [entry.data for entry in host.logs if entry.logger == "planter"] == [f"log {SHOWN}"]
    assert_planted_redacted(leak, blob, SHOWN)
    for message in said:
        assert GH_TOKEN not in message.model_dump_json()
        assert SHOWN in message.model_dump_json()
    assert GH_TOKEN not in served_log
    for listing in listings:
        assert GH_TOKEN not in listing.model_dump_json()
        assert SHOWN in listing.model_dump_json()
    [described] = [tool for tool in listings[0].tools if tool.name == "planter__described"]
    assert (described.title, described.description) == (
        f"Described {SHOWN}",
        f"Uses the key {SHOWN}.",
    )
