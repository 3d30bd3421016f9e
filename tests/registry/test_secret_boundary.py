"""One guard at the boundary, both ways, through the library: every request kind that carries
text to a server is refused when it holds another server's secret (and the server never
sees it), and every kind of message a server sends reaches the host with every known
secret redacted. In both protocol eras.

``github`` holds a GitHub token; ``planter`` (tests/servers/secret_planter_server.py) has it
planted, from a file, in everything it says; ``asker`` (tests/servers/asking_server.py)
asks the host a form question whose answer the host fills with the token.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
import pytest

import mcpmount
from mcpmount.adapters import AnthropicAdapter
from mcpmount.errors import ArgumentsError, CallDeniedError, SecretRefusedError, UpstreamError
from mcpmount.handlers import Asker, ClientHandlers
from mcpmount.registry import Registry, View
from secret_support import assert_planted_redacted
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

GH_TOKEN = "ghp_" + "Hq7Wm2Xp" * 4 + "Lz5k"
SHOWN = "[redacted: secret of server 'github']"
Era = Literal["auto", "legacy"]


def boundary_config(tmp_path: Path, era: Era, extra: str = "") -> mcpmount.RegistryConfig:
    plant = tmp_path / "plant"
    plant.write_text(GH_TOKEN)
    py = sys.executable
    path = tmp_path / "boundary.toml"
    path.write_text(
        f'[registry]\nstartup_timeout = 20\n\n[servers.github]\ncommand = "{py}"\n'
        f"args = [{json.dumps(str(SERVERS / 'token_thief_server.py'))}]\n"
        f'env = {{ TOKEN = "{GH_TOKEN}" }}\nprotocol = "{era}"\n\n'
        f'[servers.planter]\ncommand = "{py}"\n'
        f"args = [{json.dumps(str(SERVERS / 'secret_planter_server.py'))}]\n"
        f'env = {{ PLANT_FILE = "{plant}" }}\nprotocol = "{era}"\n{extra}\n\n'
        f'[servers.asker]\ncommand = "{py}"\n'
        f'args = [{json.dumps(str(SERVERS / "asking_server.py"))}]\nprotocol = "{era}"\n'
    )
    return mcpmount.load_config(path, environ={"PATH": "/usr/bin:/bin"})


async def received(registry: Registry) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = json.loads(text_of(await registry.call("planter__received")))
    return got


def template(registry: Registry) -> str:
    [found] = [t.uri_template for t in registry.resource_templates() if "items" in t.uri_template]
    return found


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_every_request_kind_carrying_another_servers_secret_is_refused(
    tmp_path: Path, era: Era
) -> None:
    """A tool argument (as a value, as a name), a prompt argument, a template URI, a
    completion value and its context, an elicitation answer: each refused, none reaching
    its server, no refusal quoting the token."""
    answered: list[str] = []

    async def elicit(
        asker: Asker, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        answered.append(asker.server)
        return mcp_types.ElicitResult(action="accept", content={"answer": GH_TOKEN})

    handlers = ClientHandlers(elicitation=elicit)
    errors: list[BaseException] = []
    with anyio.fail_after(60):
        async with mcpmount.open_registry(
            boundary_config(tmp_path, era), handlers=handlers
        ) as registry:
            uri = template(registry).replace("{item}", GH_TOKEN)
            prompt = mcp_types.PromptReference(type="ref/prompt", name="planter__greet")
            item = mcp_types.ResourceTemplateReference(type="ref/resource", uri=template(registry))
            refusals = [
                registry.call("planter__echo", {"text": f"Bearer {GH_TOKEN}"}),
                registry.call("planter__echo", {"text": "x", GH_TOKEN: "as a name"}),
                registry.call("planter__echo", {"text": "x", "n": {GH_TOKEN: "deeper"}}),
                registry.get_prompt("planter__greet", {"name": GH_TOKEN}),
                registry.read_resource(uri),
                registry.complete(item, {"name": "item", "value": GH_TOKEN}),
                registry.complete(prompt, {"name": "name", "value": "a"}, {"other": GH_TOKEN}),
            ]
            for request in refusals:
                with pytest.raises(SecretRefusedError) as refused:
                    await request
                assert refused.value.owner == "github"
                errors.append(refused.value)
            with pytest.raises(ArgumentsError) as unsendable:  # a key named by the token
                await registry.call("planter__echo", {"text": "x", GH_TOKEN: "\ud800"})
            errors.append(unsendable.value)
            try:
                asked = text_of(await registry.call("asker__elicit", {"question": "why?"}))
            except mcpmount.RegistryError as exc:
                asked = str(exc)
            got = await received(registry)
    assert answered == ["asker"]
    assert "user answered" not in asked
    assert got == []  # not one of them reached the planter
    kinds = [getattr(error, "kind", None) for error in errors]
    assert kinds == ["tool"] * 3 + ["prompt", "resource", "completion", "completion", "tool"]
    assert "in a key of the arguments" in str(errors[1])
    for error in errors:
        assert GH_TOKEN not in str(error)
        assert GH_TOKEN not in repr(error)
    assert GH_TOKEN not in asked


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_every_kind_of_message_a_server_sends_comes_back_redacted(
    tmp_path: Path, era: Era
) -> None:
    """A tool result (text, resource link, embedded text and blob, ``_meta``, structured
    content), its progress and log messages, a prompt's messages, a resource's text and
    bytes, a template's contents and a completion's values."""
    logs: list[mcp_types.LoggingMessageNotificationParams] = []
    reported: list[str | None] = []

    async def log(server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(message)

    handlers = ClientHandlers(logging=log)
    with anyio.fail_after(60):
        async with mcpmount.open_registry(
            boundary_config(tmp_path, era), handlers=handlers
        ) as registry:
            await registry.set_log_level("debug")
            prompt = mcp_types.PromptReference(type="ref/prompt", name="planter__greet")
            said: list[Any] = [
                await registry.call("planter__leak", progress=on_progress),
                await registry.get_prompt("planter__greet", {"name": "ann"}),
                await registry.read_resource("mcpmount://planter/memo://note"),
                await registry.read_resource("mcpmount://planter/memo://blob"),
                await registry.complete(prompt, {"name": "name", "value": "a"}),
            ]
            with pytest.raises(UpstreamError) as failed:
                await registry.call("planter__fail")
            listings: list[list[Any]] = [
                registry.tools(),
                registry.prompts(),
                registry.resources(),
            ]
    for listing in listings:
        dumped = json.dumps([item.model_dump(mode="json") for item in listing])
        assert GH_TOKEN not in dumped
        assert SHOWN in dumped
    assert failed.value.upstream_message == f"bad key {SHOWN}"
    assert reported == [f"progress {SHOWN}"]
    assert [entry.data for entry in logs] == [f"log {SHOWN}"]
    leak, _, _, blob, completion = said
    assert_planted_redacted(leak, blob, SHOWN)
    assert completion.completion.values == [f"a-{SHOWN}"]
    for message in [*said, *logs]:
        assert GH_TOKEN not in message.model_dump_json()
        assert SHOWN in message.model_dump_json() or message is blob


async def test_tool_search_shows_a_deferred_tool_redacted(tmp_path: Path) -> None:
    """A deferred tool's title and description reach the model through ``tool_search``'s
    answer: redacted there too."""
    config = boundary_config(tmp_path, "legacy", 'defer = ["described"]')
    with anyio.fail_after(60):
        async with mcpmount.open_registry(config) as registry:
            found = await registry.call("tool_search", {"query": "described key"})
    dumped = found.model_dump_json()
    assert "planter__described" in dumped
    assert GH_TOKEN not in dumped
    assert SHOWN in dumped


async def test_a_deferred_tool_a_search_activated_is_listed_redacted(tmp_path: Path) -> None:
    """Once a search found it, a deferred tool joins the conversation's list (the view,
    and so ``serve``'s ``tools/list`` and the OpenAI export) and the Anthropic export's
    ``defer_loading`` entries: redacted there as in the manifest."""
    config = boundary_config(tmp_path, "legacy", 'defer = ["described"]')
    with anyio.fail_after(60):
        async with mcpmount.open_registry(config) as registry:
            view = View(registry)
            await view.run_tool_search({"query": "described key"})
            listed = [t for t in view.tools() if t.name == "planter__described"]
            exported = AnthropicAdapter(registry).tools()
    assert listed, "the search did not activate the deferred tool"
    for shown in (json.dumps([t.model_dump(mode="json") for t in listed]), json.dumps(exported)):
        assert "planter__described" in shown
        assert GH_TOKEN not in shown
        assert SHOWN in shown


async def test_a_deny_all_before_call_refuses_every_request_kind(tmp_path: Path) -> None:
    """``before_call = ["false"]`` refuses prompts, reads and completions too, and its
    program is told the kind of each request."""
    gate = json.dumps([sys.executable, str(SERVERS / "gate_program.py"), str(tmp_path)])
    config = boundary_config(tmp_path, "legacy", f"before_call = {gate}")
    with anyio.fail_after(60):
        async with mcpmount.open_registry(config) as registry:
            prompt = mcp_types.PromptReference(type="ref/prompt", name="planter__greet")
            for request in (
                registry.get_prompt("planter__greet", {"name": "refuse"}),
                registry.read_resource("mcpmount://planter/memo://items/refuse"),
                registry.complete(prompt, {"name": "name", "value": "refuse"}),
            ):
                with pytest.raises(CallDeniedError, match="no shouting"):
                    await request
            allowed = await registry.get_prompt("planter__greet", {"name": "fine"})
            got = await received(registry)
    asked = [json.loads(line) for line in (tmp_path / "calls").read_text().splitlines()]
    assert [entry["kind"] for entry in asked] == [
        "prompts/get",
        "resources/read",
        "completion/complete",
        "prompts/get",
        "tools/call",
    ]
    assert got == [{"kind": "prompts/get", "name": "fine"}]
    assert "Hello fine" in str(allowed.messages[0].content)
