"""The client side of MCP: what an upstream server asks is answered by the host's handlers,
offered only when given, told who asks, and never able to break the connection."""

from __future__ import annotations

import json
from typing import Literal

import anyio
import mcp_types
import pytest
from mcp import MCPError

from asking_support import BEHAVIOUR, Recorder, asking, fresh_asking_server
from http_fixture import serve_http
from mcpmount.config import HttpServer, RegistryConfig, RegistrySettings
from mcpmount.errors import CallTimeoutError, UpstreamError
from mcpmount.handlers import Asker, ClientHandlers, ElicitationHandler
from mcpmount.registry import Registry, open_registry
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

Era = Literal["auto", "legacy"]
ERAS: list[Era] = ["auto", "legacy"]


@pytest.mark.parametrize("era", ERAS)
async def test_each_handler_answers_its_request_and_is_told_the_tool_and_context(era: Era) -> None:
    """Sampling, form and URL elicitation and roots reach the handlers, attributed."""
    recorder = Recorder()
    async with Registry(handlers=recorder.handlers()) as registry:
        await registry.mount("a", asking(protocol=era))
        sampled = await registry.call("a__sample", {"prompt": "hi"}, context="turn-1")
        elicited = await registry.call("a__elicit", {"question": "why?"}, context="turn-2")
        visited = await registry.call("a__elicit_url", {"url": "https://example.com/x"})
        rooted = await registry.call("a__roots", {}, context=("turn", 4))
    assert text_of(sampled) == "model said: echo hi"
    assert text_of(elicited) == "user answered: because"
    assert text_of(visited) == "user action: accept"
    assert text_of(rooted) == "roots: file:///work/project"
    assert recorder.asked == [
        ("sampling", "a", "a__sample", "turn-1"),
        ("elicitation:form", "a", "a__elicit", "turn-2"),
        ("elicitation:url", "a", "a__elicit_url", None),
        ("roots", "a", "a__roots", ("turn", 4)),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_without_handlers_nothing_is_offered_and_the_server_cannot_ask(era: Era) -> None:
    """No handler: the server sees no capability; its asking tools fail, the rest work."""
    config = RegistryConfig(RegistrySettings(), {"a": asking(protocol=era)})
    async with open_registry(config) as registry:
        for tool, arguments in [("a__sample", {"prompt": "x"}), ("a__roots", {})]:
            with pytest.raises(UpstreamError, match="capability"):
                await registry.call(tool, arguments)
        with pytest.raises(UpstreamError, match="did not declare the form elicitation"):
            await registry.call("a__elicit", {"question": "q"})
        assert text_of(await registry.call("a__read_thing", {"name": "n"})) == "read n"


@pytest.mark.parametrize("era", ERAS)
async def test_only_the_capabilities_with_a_handler_are_offered(era: Era) -> None:
    """A roots handler alone offers roots, not sampling."""
    recorder = Recorder()
    handlers = ClientHandlers(roots=recorder.handlers().roots)
    async with Registry(handlers=handlers) as registry:
        await registry.mount("a", asking(protocol=era))
        assert "file:///work/project" in text_of(await registry.call("a__roots", {}))
        with pytest.raises(UpstreamError, match="sampling capability"):
            await registry.call("a__sample", {"prompt": "x"})


@pytest.mark.parametrize("era", ERAS)
async def test_concurrent_calls_are_told_apart_where_the_era_allows(era: Era) -> None:
    """2026-07-28: each request names its own call. Handshake era: with two calls of the
    server in flight the asker is unknown (tool and context None), never a wrong guess."""
    first_asked = anyio.Event()
    release = anyio.Event()
    askers: list[Asker] = []

    async def sample(
        asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        askers.append(asker)
        first_asked.set()
        if len(askers) == 2:
            release.set()
        await release.wait()
        content = mcp_types.TextContent(type="text", text=str(asker.context))
        return mcp_types.CreateMessageResult(role="assistant", content=content, model="m")

    results: dict[str, str] = {}
    async with Registry(handlers=ClientHandlers(sampling=sample)) as registry:
        await registry.mount("a", asking(protocol=era))

        async def call(context: str) -> None:
            result = await registry.call("a__sample", {"prompt": context}, context=context)
            results[context] = text_of(result)

        with anyio.fail_after(BEHAVIOUR):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "A")
                await first_asked.wait()  # A asks alone; then B is sent, and asks
                tg.start_soon(call, "B")
    b = ("a__sample", "B") if era == "auto" else (None, None)
    assert [(x.server, x.tool, x.context) for x in askers] == [
        ("a", "a__sample", "A"),
        ("a", *b),
    ]
    assert results == {"A": "model said: A", "B": f"model said: {b[1]}"}


async def _refuse(asker: Asker, params: object) -> mcp_types.ElicitResult:
    raise RuntimeError("the host broke")


async def _time_out(asker: Asker, params: object) -> mcp_types.ElicitResult:
    with anyio.fail_after(0.01):
        await anyio.sleep(BEHAVIOUR)
    raise AssertionError("unreachable")


async def _answer_nonsense(asker: Asker, params: object) -> mcp_types.ElicitResult:
    return "yes"  # pyright: ignore[reportReturnType]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (_refuse, r"elicitation handler failed \(RuntimeError\)"),
        (_time_out, r"elicitation handler failed \(TimeoutError\)"),
        (_answer_nonsense, "elicitation handler returned an invalid answer"),
    ],
)
async def test_a_failing_handler_fails_that_call_only_and_is_logged_naming_the_server(
    era: Era, handler: ElicitationHandler, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The server is answered with an error; the connection and its process stay up."""
    async with Registry(handlers=ClientHandlers(elicitation=handler)) as registry:
        await registry.mount("a", asking(protocol=era))
        pid = registry.status()[0].pid
        with pytest.raises(UpstreamError, match=problem) as caught:
            await registry.call("a__elicit", {"question": "q"})
        assert caught.value.code == mcp_types.INTERNAL_ERROR
        assert "the host broke" not in str(caught.value)  # the host's detail stays local
        assert text_of(await registry.call("a__read_thing", {"name": "n"})) == "read n"
        assert registry.status()[0].pid == pid
    logged = [r.getMessage() for r in caplog.records if r.name == "mcpmount.upstream._asking"]
    assert len(logged) == 1
    assert logged[0].startswith("server 'a': the elicitation handler")
    assert "tool 'a__elicit'" in logged[0]


@pytest.mark.parametrize("era", ERAS)
async def test_a_handler_raising_an_mcp_error_answers_with_that_error(era: Era) -> None:
    """A deliberate JSON-RPC error (e.g. relayed from a downstream client) goes as it is."""

    async def relay(asker: Asker, params: object) -> mcp_types.ElicitResult:
        raise MCPError(-32042, "visit the URL first")

    async with Registry(handlers=ClientHandlers(elicitation=relay)) as registry:
        await registry.mount("a", asking(protocol=era))
        with pytest.raises(UpstreamError, match="visit the URL first") as caught:
            await registry.call("a__elicit_url", {"url": "https://example.com"})
        assert caught.value.code == -32042


@pytest.mark.parametrize("era", ERAS)
async def test_roots_changed_notifies_servers_in_the_handshake_era_only_with_a_handler(
    era: Era,
) -> None:
    """The 2026-07-28 era has no such notice: its servers ask for the roots in each call."""
    recorder = Recorder()
    async with Registry(handlers=ClientHandlers(roots=recorder.roots)) as registry:
        await registry.mount("a", asking(protocol=era))
        await registry.mount("b", asking(protocol=era))
        await registry.roots_changed()
        await registry.roots_changed()
        counts = [await _calls(registry, server) for server in ("a", "b")]
    expected = 2 if era == "legacy" else 0
    assert [c.get("roots_changed", 0) for c in counts] == [expected, expected]


async def test_roots_changed_without_a_roots_handler_sends_nothing() -> None:
    """No roots offered, so nothing to change."""
    async with Registry() as registry:
        await registry.mount("a", asking(protocol="legacy"))
        await registry.roots_changed()
        assert "roots_changed" not in await _calls(registry, "a")


async def _calls(registry: Registry, server: str) -> dict[str, object]:
    """The server's own counters; a notice sent before this call has arrived by then."""
    counts: dict[str, object] = json.loads(text_of(await registry.call(f"{server}__calls")))
    return counts


@pytest.mark.parametrize("era", ERAS)
async def test_a_handler_still_waiting_when_its_call_times_out_is_cancelled(era: Era) -> None:
    """The call's timeout bounds its handlers (in the handshake era through the server,
    which cancels its own request when the call is cancelled)."""
    cancelled = anyio.Event()

    async def forever(
        asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with Registry(handlers=ClientHandlers(sampling=forever)) as registry:
        await registry.mount("a", asking(protocol=era))
        with pytest.raises(CallTimeoutError):
            await registry.call("a__sample", {"prompt": "x"}, timeout=0.5)
        with anyio.fail_after(BEHAVIOUR):
            await cancelled.wait()
        assert text_of(await registry.call("a__read_thing", {"name": "n"})) == "read n"


@pytest.mark.parametrize("era", ERAS)
async def test_handlers_answer_a_server_reached_over_streamable_http(era: Era) -> None:
    """The same answers and attribution over HTTP (SSE back channel or input rounds)."""
    recorder = Recorder()
    app = fresh_asking_server().streamable_http_app()
    async with serve_http(app) as url, Registry(handlers=recorder.handlers()) as registry:
        await registry.mount("h", HttpServer(url=url, protocol=era))
        view = registry.view()
        sampled = await view.call("h__sample", {"prompt": "hi"}, context="v")
        elicited = await view.call("h__elicit", {"question": "why?"}, context="v")
        visited = await view.call("h__elicit_url", {"url": "https://example.com/x"})
        rooted = await view.call("h__roots", {}, context="v")
    assert [text_of(r) for r in (sampled, elicited, visited, rooted)] == [
        "model said: echo hi",
        "user answered: because",
        "user action: accept",
        "roots: file:///work/project",
    ]
    assert recorder.asked == [
        ("sampling", "h", "h__sample", "v"),
        ("elicitation:form", "h", "h__elicit", "v"),
        ("elicitation:url", "h", "h__elicit_url", None),
        ("roots", "h", "h__roots", "v"),
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_configured_roots_answer_when_the_host_has_no_roots_handler(era: Era) -> None:
    """No roots handler, roots configured: the capability is offered, and the server is told
    the server's own roots, else the registry's."""
    settings = RegistrySettings(roots=["/srv/shared"])
    servers = {"a": asking(protocol=era), "b": asking(protocol=era, roots=["file:///srv/b"])}
    async with open_registry(RegistryConfig(settings, servers)) as registry:
        shared = text_of(await registry.call("a__roots", {}))
        own = text_of(await registry.call("b__roots", {}))
    assert (shared, own) == ("roots: file:///srv/shared", "roots: file:///srv/b")
