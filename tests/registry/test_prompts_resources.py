"""Prompts, resources and templates: named, routed, rewritten, pinned, all-or-nothing, live.

Every test runs a real content server (tests/servers/content_server.py) as a subprocess,
in both protocol eras: ``legacy`` (handshake, notices through the message handler) and
``auto`` (2026-07-28, notices through the listen stream).
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, cast

import anyio
import mcp_types
import pytest
from mcp.server.mcpserver import MCPServer

from http_fixture import serve_http
from leaks import leak_checked
from mcpmount.catalog import Pins, registry_uri, split_uri
from mcpmount.config import HttpServer, RegistrySettings
from mcpmount.errors import (
    CallTimeoutError,
    DefinitionChangedError,
    NotSupportedError,
    ResultTooLargeError,
    ToolListError,
    UnknownPromptError,
    UnknownResourceError,
    UpstreamError,
)
from mcpmount.registry import Registry, RegistryChange
from support import SERVERS, record_pids, stdio_spec

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

CONTENT = str(SERVERS / "content_server.py")


Era = Literal["legacy", "auto"]


@pytest.fixture(params=["legacy", "auto"], name="protocol")
def protocol_fixture(request: pytest.FixtureRequest) -> Era:
    return cast("Era", request.param)


def content(protocol: str, *flags: str, **options: Any) -> Any:
    return stdio_spec(CONTENT, *flags, protocol=protocol, **options)


@pytest.fixture(scope="module", params=["legacy", "auto"], name="shared")
async def shared_fixture(request: pytest.FixtureRequest) -> AsyncIterator[Registry]:
    """A registry with content servers ``a`` and ``b`` (labelled A and B) in one era, started
    once for the module's tests that only read from it and checked for leaks when the last of
    them is done. Tests that change a server or mount with other options start their own."""
    async with leak_checked(), Registry() as registry:
        await registry.mount("a", content(request.param, "--label", "A"))
        await registry.mount("b", content(request.param, "--label", "B"))
        record_pids(registry)
        yield registry


async def wait_for(condition: Callable[[], bool], timeout: float = 15) -> None:
    """Poll a condition (a bounded loop: it fails the test after ``timeout``)."""
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.02)


def texts(result: mcp_types.ReadResourceResult) -> list[str]:
    return [c.text for c in result.contents if isinstance(c, mcp_types.TextResourceContents)]


class TestNamesAndRouting:
    async def test_two_servers_with_the_same_uris_are_listed_and_read_apart(
        self, shared: Registry
    ) -> None:
        """Prompts are <ns>__<prompt>; URIs are mcpmount://<ns>/<uri>, read from their server."""
        assert [p.name for p in shared.prompts()] == ["a__greet", "b__greet"]
        uris = [r.uri for r in shared.resources()]
        assert uris == [
            "mcpmount://a/memo://one",
            "mcpmount://a/file:///shared.txt",
            "mcpmount://b/memo://one",
            "mcpmount://b/file:///shared.txt",
        ]
        assert [t.uri_template for t in shared.resource_templates()] == [
            "mcpmount://a/memo://items/{item}",
            "mcpmount://b/memo://items/{item}",
        ]
        for server in ("a", "b"):
            read = await shared.read_resource(f"mcpmount://{server}/file:///shared.txt")
            assert texts(read) == [f"shared by {server.upper()}"]
            assert [c.uri for c in read.contents] == [f"mcpmount://{server}/file:///shared.txt"]

    async def test_a_resource_link_a_tool_returns_is_read_back_through_the_registry(
        self, shared: Registry
    ) -> None:
        """resource_link and embedded resource URIs in results become registry URIs."""
        result = await shared.call("a__link")
        link, embedded = result.content[1], result.content[2]
        assert isinstance(link, mcp_types.ResourceLink)
        assert isinstance(embedded, mcp_types.EmbeddedResource)
        assert link.uri == embedded.resource.uri == "mcpmount://a/memo://one"
        assert texts(await shared.read_resource(link.uri)) == ["one"]
        prompt = await shared.get_prompt("a__greet", {"name": "Ada", "style": "loud"})
        first, second = (m.content for m in prompt.messages)
        assert isinstance(first, mcp_types.TextContent)
        assert first.text == "Hello, Ada!"
        assert isinstance(second, mcp_types.EmbeddedResource)
        assert second.resource.uri == "mcpmount://a/memo://one"

    async def test_an_expanded_template_is_read_from_its_server(self, shared: Registry) -> None:
        """Any URI under a server's prefix routes to it, listed or not."""
        template = shared.resource_templates()[0].uri_template
        uri = template.replace("{item}", "pear")
        assert texts(await shared.read_resource(uri)) == ["item:pear"]

    async def test_completions_are_routed_with_the_raw_name_and_uri(self, shared: Registry) -> None:
        """A public prompt name and a registry template URI reach the server raw."""
        ref = mcp_types.PromptReference(type="ref/prompt", name="a__greet")
        done = await shared.complete(ref, {"name": "name", "value": "b"})
        assert done.completion.values == ["bob"]
        template = shared.resource_templates()[0].uri_template
        ref2 = mcp_types.ResourceTemplateReference(type="ref/resource", uri=template)
        done = await shared.complete(ref2, {"name": "item", "value": "a"})
        assert done.completion.values == ["apple", "avocado"]

    async def test_errors_name_the_server_and_what_was_asked(self, shared: Registry) -> None:
        """Unknown names and URIs are lookups; an upstream refusal names server and prompt."""
        with pytest.raises(UnknownPromptError, match="a__greet"):
            await shared.get_prompt("a__gret")
        with pytest.raises(UnknownResourceError, match="no mounted server"):
            await shared.read_resource("mcpmount://zz/memo://one")
        with pytest.raises(UnknownResourceError, match="mcpmount://"):
            await shared.read_resource("memo://one")
        with pytest.raises(UpstreamError, match=r"server 'a': prompt 'a__greet'.*required"):
            await shared.get_prompt("a__greet", {})
        with pytest.raises(UpstreamError, match="resource 'mcpmount://a/memo://nope'"):
            await shared.read_resource("mcpmount://a/memo://nope")

    async def test_a_read_over_max_result_bytes_is_refused(self, protocol: str) -> None:
        """Reads obey the server's max_result_bytes like tool results."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol, max_result_bytes=10))
            record_pids(registry)
            with pytest.raises(ResultTooLargeError, match="resource 'mcpmount://a/memo://one'"):
                await registry.read_resource("mcpmount://a/memo://one")

    async def test_a_read_obeys_its_timeout_and_the_server_stays_usable(
        self, protocol: str
    ) -> None:
        """A read that takes too long is a CallTimeoutError naming the URI; nothing breaks."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            with anyio.fail_after(20), pytest.raises(CallTimeoutError, match="memo://slow"):
                await registry.read_resource("mcpmount://a/memo://slow", timeout=0.5)
            assert texts(await registry.read_resource("mcpmount://a/memo://one")) == ["one"]


class TestLive:
    async def test_a_subscribed_resource_update_reaches_the_listener(self, protocol: str) -> None:
        """subscribe_resource is forwarded; the server's update arrives as a registry URI."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            updates: list[str] = []
            registry.subscribe_updates(updates.append)
            await registry.subscribe_resource("mcpmount://a/memo://one")
            await registry.call("a__touch", {"uri": "memo://one"})
            await wait_for(lambda: updates == ["mcpmount://a/memo://one"])
            await registry.unsubscribe_resource("mcpmount://a/memo://one")
            await registry.call("a__touch", {"uri": "memo://one"})
            await registry.call("a__link")  # a round trip: a stray update would be in by now
            assert updates == ["mcpmount://a/memo://one"]

    async def test_subscriptions_survive_a_restart(self, protocol: str) -> None:
        """A restarted server is subscribed again to what its old connection was."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol, restart="on-failure"))
            record_pids(registry)
            updates: list[str] = []
            registry.subscribe_updates(updates.append)
            await registry.subscribe_resource("mcpmount://a/file:///shared.txt")
            pid = registry.status()[0].pid
            assert pid is not None
            os.killpg(pid, signal.SIGKILL)
            await wait_for(lambda: registry.status()[0].restarts == 1)
            record_pids(registry)
            with anyio.fail_after(15):  # the new subscription is sent just after the restart
                while not updates:
                    await registry.call("a__touch", {"uri": "file:///shared.txt"})
                    await anyio.sleep(0.1)
            assert set(updates) == {"mcpmount://a/file:///shared.txt"}

    async def test_a_server_without_subscriptions_says_so(self, protocol: str) -> None:
        """No subscribe capability: a clear error, nothing sent."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol, "--no-subscribe"))
            record_pids(registry)
            with pytest.raises(NotSupportedError, match="resource subscriptions"):
                await registry.subscribe_resource("mcpmount://a/memo://one")

    async def test_changed_prompt_and_resource_lists_are_relisted(self, protocol: str) -> None:
        """list_changed re-lists; listeners learn which list changed and what was added."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            changes: list[RegistryChange] = []
            registry.subscribe(changes.append)
            await registry.call("a__add_prompt", {"name": "farewell"})
            await wait_for(lambda: "a__farewell" in [p.name for p in registry.prompts()])
            await registry.call("a__add_resource", {"uri": "memo://two"})
            await wait_for(lambda: any(c.kind == "resources" for c in changes))
            assert RegistryChange("a", added=("a__farewell",), kind="prompts") in changes
            added = RegistryChange("a", added=("mcpmount://a/memo://two",), kind="resources")
            assert added in changes
            assert all(c.kind != "tools" for c in changes)
            assert texts(await registry.read_resource("mcpmount://a/memo://two")) == [
                "added memo://two"
            ]

    async def test_a_refused_relist_keeps_the_old_lists(self, protocol: str) -> None:
        """A changed list that breaks a rule is not applied; the old prompts stay usable."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            before = registry.prompts()
            await registry.call("a__add_prompt", {"name": "bad name!"})
            await wait_for(lambda: registry.status()[0].error is not None)
            assert "prompt 'bad name!'" in (registry.status()[0].error or "")
            assert registry.prompts() == before
            result = await registry.get_prompt("a__greet", {"name": "Ada"})
            assert result.messages


class TestAllOrNothing:
    async def test_a_bad_prompt_refuses_the_whole_server(self, protocol: str) -> None:
        """An invalid prompt name refuses the server: no tool, prompt or resource is left."""
        async with Registry() as registry:
            await registry.mount("good", content(protocol))
            record_pids(registry)
            with pytest.raises(ToolListError, match="prompt 'bad name!'") as caught:
                await registry.mount("bad", content(protocol, "--bad-prompt"))
            assert caught.value.server == "bad"
            assert caught.value.kind == "prompt"
            assert [s.server for s in registry.status()] == ["good"]
            assert {t.server for t in registry.mounted_tools()} == {"good"}
            assert [p.name for p in registry.prompts()] == ["good__greet"]
            assert {split_uri(r.uri)[0] for r in registry.resources()} == {"good"}

    async def test_invalid_names_skip_drops_only_the_bad_prompt(self, protocol: str) -> None:
        """The tools' invalid_names policy applies to prompts."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol, "--bad-prompt", invalid_names="skip"))
            record_pids(registry)
            assert [p.name for p in registry.prompts()] == ["a__greet"]

    async def test_invalid_names_sanitize_renames_the_prompt_and_routes_it_raw(
        self, protocol: str
    ) -> None:
        """A sanitized prompt name gets the tools' hash suffix; gets reach it by its raw name."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol, "--bad-prompt", invalid_names="sanitize"))
            record_pids(registry)
            renamed, greet = (p.name for p in registry.prompts())  # sorted by name
            assert greet == "a__greet"
            assert renamed.startswith("a__bad_name__")
            result = await registry.get_prompt(renamed, {"name": "Ada"})
            assert result.messages

    async def test_too_many_prompts_refuse_the_server(self, protocol: str) -> None:
        """max_prompts bounds a server's prompt list."""
        async with Registry(RegistrySettings(max_prompts=1)) as registry:
            with pytest.raises(ToolListError, match=r"more than 1 prompts \(max_prompts\)"):
                await registry.mount("a", content(protocol, "--bad-prompt"))
            assert registry.prompts() == []


class TestPins:
    async def test_a_changed_prompt_is_refused_under_on_change_refuse(
        self, protocol: str, tmp_path: Path
    ) -> None:
        """The lock pins prompts; a differing one is refused, like a tool."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            pins = registry.lock()
        assert pins.content is not None
        assert set(pins.content["prompts"]["a"]) == {"greet"}
        assert set(pins.content["resources"]["a"]) == {"memo://one", "file:///shared.txt"}
        assert set(pins.content["templates"]["a"]) == {"memo://items/{item}"}
        path = tmp_path / "servers.lock"
        pins.write(path)
        read = Pins.read(path)
        assert read is not None
        assert read.content == pins.content
        async with Registry(pins=read) as registry:
            changed = content(protocol, "--greet-description", "Now it deletes files.")
            with pytest.raises(DefinitionChangedError, match=r"prompts differ.*'greet'"):
                await registry.mount("a", changed)
            assert registry.prompts() == []
            assert registry.mounted_tools() == []
            await registry.mount("a", content(protocol))
            record_pids(registry)
            assert [p.name for p in registry.prompts()] == ["a__greet"]

    async def test_an_old_lock_file_pins_tools_only(self, protocol: str) -> None:
        """A lock without prompt or resource sections still reads, and pins only tools."""
        async with Registry() as registry:
            await registry.mount("a", content(protocol))
            record_pids(registry)
            tools_only = Pins(registry.lock().servers)
        async with Registry(pins=tools_only) as registry:
            await registry.mount("a", content(protocol, "--greet-description", "Changed."))
            record_pids(registry)
            assert registry.prompts()[0].description == "Changed."


async def test_prompts_and_resources_of_an_http_server(protocol: Era) -> None:
    """Streamable HTTP: an MCPServer's prompt, resource and template, mounted and routed."""
    server = MCPServer("web", version="0.1.0")

    @server.prompt()
    def review(code: str) -> str:
        """Review some code."""
        return f"Please review: {code}"

    @server.resource("notes://today")
    def today() -> str:
        return "buy milk"

    @server.resource("notes://day/{day}")
    def day(day: str) -> str:
        return f"notes of {day}"

    async with serve_http(server.streamable_http_app()) as url, Registry() as registry:
        await registry.mount("web", HttpServer(url=url, protocol=protocol))
        assert [p.name for p in registry.prompts()] == ["web__review"]
        got = await registry.get_prompt("web__review", {"code": "x = 1"})
        first = got.messages[0].content
        assert isinstance(first, mcp_types.TextContent)
        assert first.text == "Please review: x = 1"
        assert [r.uri for r in registry.resources()] == ["mcpmount://web/notes://today"]
        assert texts(await registry.read_resource("mcpmount://web/notes://today")) == ["buy milk"]
        template = registry.resource_templates()[0].uri_template
        assert template == "mcpmount://web/notes://day/{day}"
        read = await registry.read_resource(template.replace("{day}", "monday"))
        assert texts(read) == ["notes of monday"]


def test_registry_uris_route_by_the_namespace_only() -> None:
    """The namespace ends at the first '/'; the rest is the server's URI, verbatim."""
    uri = registry_uri("fs", "file:///a/b.txt")
    assert uri == "mcpmount://fs/file:///a/b.txt"
    assert split_uri(uri) == ("fs", "file:///a/b.txt")
    assert split_uri("mcpmount://fs/mcpmount://x/y") == ("fs", "mcpmount://x/y")
    for bad in ("mcpmount://fs", "mcpmount://Bad Ns/x", "file:///a", "mcpmount:///x"):
        with pytest.raises(UnknownResourceError):
            split_uri(bad)
