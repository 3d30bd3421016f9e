"""Static bearer tokens on HTTP `mcpmount serve`: refused requests never reach an upstream
server, a token sees only its namespaces, allowed hosts, and no unauthenticated exposure."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import MCPError

from serve.serve_support import (
    BEHAVIOUR,
    STARTUP,
    found,
    names,
    serve_command,
    served_http,
    wait_for_tool,
    write_config,
)
from serve_auth.auth_support import (
    OTHER_TOKEN,
    TOKEN,
    bearer_client,
    calls,
    content,
    post,
    recording,
)

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

MODES = ["legacy", "auto"]
"""The handshake era (2025-11-25) and the 2026-07-28 era."""


@pytest.mark.parametrize("mode", MODES)
async def test_no_token_or_a_wrong_one_is_refused_401_and_reaches_no_upstream_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Each refused request is answered 401 with a Bearer challenge before any MCP message is
    read: the upstream server records no call; the right token's call reaches it once."""
    monkeypatch.setenv("SERVE_TOKEN", TOKEN)
    record = tmp_path / "alpha.log"
    config = write_config(tmp_path, recording("alpha", record))
    async with (
        served_http(config, tmp_path, "--token-env", "SERVE_TOKEN") as (url, _),
        bearer_client(url, TOKEN, mode=mode) as client,
    ):
        await wait_for_tool(client, "alpha__echo")
        refused = [
            await post(url),
            await post(url, authorization="Bearer wrong"),
            await post(url, authorization=f"Bearer {TOKEN[:-1]}"),
            await post(url, authorization=f"Bearer {TOKEN.upper()}"),
            await post(url, authorization=f"Basic {TOKEN}"),
            await post(url, authorization=f"Bearer {OTHER_TOKEN}"),
        ]
        with pytest.raises(ExceptionGroup) as failed:  # the SDK Client cannot connect
            async with bearer_client(url, OTHER_TOKEN, mode=mode):
                pass
        assert failed.value.subgroup(lambda e: isinstance(e, MCPError)) is not None
        assert calls(record) == []
        with anyio.fail_after(BEHAVIOUR):
            result = await client.call_tool("alpha__echo", {"text": "hello"})
    for response in refused:
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert 'error="invalid_token"' in challenge
        assert response.json()["error"] == "invalid_token"
    assert result.content == [mcp_types.TextContent(type="text", text="hello")]
    assert calls(record) == ["tools/call echo"]
    assert TOKEN not in (tmp_path / "serve.log").read_text()


def _tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_text(f"# the tests' tokens\n\n{TOKEN} alpha  # sees alpha only\n{OTHER_TOKEN}\n")
    return path


@pytest.mark.parametrize(
    ("mode", "stateless"), [("legacy", False), ("auto", False), ("auto", True)]
)
async def test_a_token_sees_only_its_namespaces_and_a_hidden_one_is_unknown(
    tmp_path: Path, mode: str, stateless: bool
) -> None:
    """alpha's token lists, searches, gets and reads alpha only; naming beta or gamma is
    answered as an unknown name that names nothing else, and beta records no call."""
    record = tmp_path / "beta.log"
    config = write_config(
        tmp_path, content("alpha"), recording("beta", record, "defer = true"), content("gamma")
    )
    tokens = _tokens_file(tmp_path)
    flags = ["--stateless"] if stateless else []
    async with (
        served_http(config, tmp_path, "--tokens-file", str(tokens), *flags) as (url, _),
        bearer_client(url, OTHER_TOKEN, mode=mode) as everything,
        bearer_client(url, TOKEN, mode=mode) as limited,
    ):
        for mounted in ("alpha__link", "gamma__link"):  # the servers mount side by side
            await wait_for_tool(everything, mounted)
        with anyio.fail_after(BEHAVIOUR):
            tools = names(await limited.list_tools())
            prompts = [p.name for p in (await limited.list_prompts()).prompts]
            resources = [r.uri for r in (await limited.list_resources()).resources]
            templates = (await limited.list_resource_templates()).resource_templates
            searched = await limited.call_tool("tool_search", {"query": "echo text"})
            refused: list[MCPError] = []
            for attempt in (
                limited.call_tool("beta__echo", {"text": "x"}),
                limited.call_tool("gamma__link", {}),
                limited.get_prompt("gamma__greet", {"name": "x"}),
                limited.read_resource("mcpmount://gamma/memo://one"),
            ):
                with pytest.raises(MCPError) as error:
                    await attempt
                refused.append(error.value)
            through: list[MCPError] = []
            with pytest.raises(MCPError) as error:  # hidden through call_tool too
                await limited.call_tool("call_tool", {"name": "beta__echo"})
            through.append(error.value)
            allowed = await limited.call_tool("alpha__link", {})
            if mode == "auto" and not stateless:  # a listen stream: no hidden resource
                asked = ["mcpmount://alpha/memo://one", "mcpmount://gamma/memo://one"]
                async with limited.listen(resource_subscriptions=asked) as listening:
                    honoured = listening.honored.resource_subscriptions
                assert honoured == ["mcpmount://alpha/memo://one"]
            prompt = await limited.get_prompt("alpha__greet", {"name": "Ada"})
            all_tools = names(await everything.list_tools())
            all_found = await everything.call_tool("tool_search", {"query": "echo text"})
    alpha = ["alpha__add_prompt", "alpha__add_resource", "alpha__link", "alpha__touch"]
    assert sorted(tools) == [*alpha, "call_tool", "tool_search"]  # call_tool: every client
    assert len(through) == 1
    for error in through:
        _assert_unknown(str(error), "tool", "beta__echo", visible=tools)
    assert prompts == ["alpha__greet"]
    assert resources
    assert all(uri.startswith("mcpmount://alpha/") for uri in resources)
    assert [t.uri_template for t in templates] == ["mcpmount://alpha/memo://items/{item}"]
    assert found(searched) == []
    not_found = -32002 if mode == "legacy" else -32602  # a resource, in the 2026-07-28 era
    assert [e.error.code for e in refused] == [-32602, -32602, -32602, not_found]
    _assert_unknown(str(refused[0]), "tool", "beta__echo", visible=tools)
    _assert_unknown(str(refused[1]), "tool", "gamma__link", visible=tools)
    _assert_unknown(str(refused[2]), "prompt", "gamma__greet", visible=prompts)
    assert str(refused[3]).startswith("cannot route resource 'mcpmount://gamma/memo://one'")
    assert not allowed.is_error
    assert prompt.messages
    assert "beta__echo" not in all_tools  # deferred: found by search, not listed
    assert "gamma__link" in all_tools
    assert found(all_found)[:1] == ["beta__echo"]
    assert calls(record) == []


def _assert_unknown(message: str, kind: str, name: str, *, visible: list[str]) -> None:
    """``message`` is the registry's unknown-name error for ``name``, whose suggestions (if
    any) are names the token sees."""
    start = f"no mounted {kind} is named {name!r}"
    assert message.startswith(start)
    rest = message.removeprefix(start)
    if rest.startswith("; did you mean "):
        suggested = rest.removeprefix("; did you mean ").removesuffix("?").split(", ")
        assert set(suggested) <= set(visible)
    else:
        assert rest.startswith(f"; list the {kind}s for their exact names")


@pytest.mark.parametrize("allowed", [False, True])
async def test_a_request_for_a_real_hostname_needs_it_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, allowed: bool
) -> None:
    """Behind a proxy the Host is the public name: 421 unless --allowed-host names it."""
    monkeypatch.setenv("SERVE_TOKEN", TOKEN)
    config = write_config(tmp_path, content("alpha"))
    flags = ["--token-env", "SERVE_TOKEN"]
    flags += ["--allowed-host", "mcp.example.com"] if allowed else []
    async with served_http(config, tmp_path, *flags) as (url, _):
        async with bearer_client(url, TOKEN, mode="legacy") as client:
            await wait_for_tool(client, "alpha__link")
        bearer = f"Bearer {TOKEN}"
        public = await post(url, authorization=bearer, host="mcp.example.com", call=False)
        with_port = await post(url, authorization=bearer, host="mcp.example.com:8443", call=False)
        foreign = await post(url, authorization=bearer, host="evil.example.com", call=False)
        local = await post(url, authorization=bearer, call=False)
    assert public.status_code == (200 if allowed else 421)
    assert with_port.status_code == (200 if allowed else 421)
    assert foreign.status_code == 421
    assert local.status_code == 200


async def test_serving_beyond_loopback_without_auth_is_refused_before_binding(
    tmp_path: Path,
) -> None:
    """0.0.0.0 with no token: exit 2 with what to do; nothing bound, no server started."""
    record = tmp_path / "alpha.log"
    config = write_config(tmp_path, recording("alpha", record))
    portfile = tmp_path / "port"
    command = serve_command(config, "--transport", "http", "--host", "0.0.0.0", "--port", "0")
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process([*command, "--portfile", str(portfile)], check=False)
    said = " ".join(done.stderr.decode().split())
    assert done.returncode == 2, said
    assert "refusing to serve HTTP on 0.0.0.0 without authentication" in said
    assert "--allow-unauthenticated" in said
    assert not portfile.exists()
    assert not record.exists()


async def test_a_malformed_tokens_file_exits_2_naming_the_line_and_no_token(
    tmp_path: Path,
) -> None:
    """A short token or a stray word: the line is named, no token is printed."""
    config = write_config(tmp_path, content("alpha"))
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{TOKEN} alpha\nshort-secret\n{OTHER_TOKEN} alpha beta\n")
    command = serve_command(config, "--transport", "http", "--tokens-file", str(tokens))
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process([*command, "--port", "0"], check=False)
    said = " ".join(done.stderr.decode().split())
    assert done.returncode == 2, said
    assert "line 2: a token must be 16 characters or more" in said
    assert "line 3: write TOKEN or TOKEN ns1,ns2" in said
    for secret in (TOKEN, OTHER_TOKEN, "short-secret"):
        assert secret not in said


async def test_config_tokens_and_hosts_come_from_the_serve_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[serve.tokens.NAME] with ${VAR} and [serve] allowed_hosts work with no flag."""
    monkeypatch.setenv("CI_MCP_TOKEN", TOKEN)
    record = tmp_path / "alpha.log"
    serve_table = (
        '[serve]\nallowed_hosts = ["mcp.example.com"]\n'
        '[serve.tokens.ci]\ntoken = "${CI_MCP_TOKEN}"\nnamespaces = ["alpha"]\n'
    )
    config = write_config(tmp_path, serve_table, recording("alpha", record))
    async with served_http(config, tmp_path) as (url, _):
        async with bearer_client(url, TOKEN, mode="auto") as client:
            await wait_for_tool(client, "alpha__echo")
            with anyio.fail_after(BEHAVIOUR):
                echoed = await client.call_tool("alpha__echo", {"text": "x"})
        refused = await post(url)
        bearer = f"Bearer {TOKEN}"
        public = await post(url, authorization=bearer, host="mcp.example.com", call=False)
    assert not echoed.is_error
    assert refused.status_code == 401
    assert public.status_code == 200
    assert calls(record) == ["tools/call echo"]
