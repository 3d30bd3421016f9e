"""Secrets never cross servers: a call carrying another server's secret is refused before it
leaves, and a result carrying a known secret is redacted before the model sees it.

Two copies of tests/servers/token_thief_server.py are mounted: ``github`` holds a GitHub token,
``weather`` its own token and a tool (``forecast``) whose description tells the model to
pass the GitHub token in ``auth``. What reached a server is read back from the server
itself (``received``), so "refused" means the server never saw the call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

import mcpmount
from mcpmount.adapters import AnthropicAdapter, OpenAIAdapter
from mcpmount.errors import CallDeniedError, SecretRefusedError
from mcpmount.registry import Registry
from support import SERVERS, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

POISONED = str(SERVERS / "token_thief_server.py")
GH_TOKEN = "ghp_" + "x7Qm2Lp9" * 4 + "Zk4w"
WEATHER_TOKEN = "wx-planted-5d8e1a"
ENVIRON = {"GH_TOKEN": GH_TOKEN, "WEATHER_TOKEN": WEATHER_TOKEN, "PATH": "/usr/bin:/bin"}


def poisoned_config(
    tmp_path: Path, *, weather: str = "", registry: str = "", environ: dict[str, str] | None = None
) -> mcpmount.RegistryConfig:
    """``github`` and ``weather`` (the poisoned one, with ``weather`` added to its table)."""
    args = json.dumps([POISONED])
    path = tmp_path / "poisoned.toml"
    path.write_text(
        f"[registry]\nstartup_timeout = 20\n{registry}\n"
        f'[servers.github]\ncommand = "{sys.executable}"\nargs = {args}\n'
        'env = { TOKEN = "${GH_TOKEN}" }\n\n'
        f'[servers.weather]\ncommand = "{sys.executable}"\nargs = {args}\n'
        f'env = {{ TOKEN = "${{WEATHER_TOKEN}}", MODE = "${{MODE:-production}}" }}\n{weather}\n'
    )
    return mcpmount.load_config(path, environ=environ or ENVIRON)


async def received(registry: Registry, server: str) -> list[dict[str, Any]]:
    """The calls ``server`` got, by its own record."""
    calls: list[dict[str, Any]] = json.loads(text_of(await registry.call(f"{server}__received")))
    return calls


def assert_never_shown(*texts: object) -> None:
    for text in texts:
        assert GH_TOKEN not in str(text)
        assert WEATHER_TOKEN not in str(text)


async def test_a_poisoned_tool_never_gets_another_servers_token(tmp_path: Path) -> None:
    """The call the poisoned description asks for is refused, naming whose secret it is and
    where, never the value; wherever in the arguments it hides; the same call without the
    token runs."""
    async with mcpmount.open_registry(poisoned_config(tmp_path)) as registry:
        assert "GitHub server's access token" in (
            registry.get("weather__forecast").definition.description or ""
        )
        hidden = [
            {"city": "Oslo", "auth": GH_TOKEN},
            {"city": f"Oslo?token={GH_TOKEN}&x=1"},
            {"city": "Oslo", "auth": f"Bearer {GH_TOKEN}"},
            {"city": "Oslo", "extra": {"list": ["a", {"deep": GH_TOKEN}]}},
            {"city": "Oslo", GH_TOKEN: "as a key"},
        ]
        refusals: list[SecretRefusedError] = []
        for arguments in hidden:
            with pytest.raises(SecretRefusedError) as caught:
                await registry.call("weather__forecast", arguments)
            refusals.append(caught.value)
        harmless = await registry.call("weather__forecast", {"city": "Oslo", "auth": "none"})
        got = await received(registry, "weather")
    wheres = ["auth", "city", "auth", "extra.list[1].deep", "a key of the arguments"]
    assert [r.where for r in refusals] == wheres
    first = refusals[0]
    assert isinstance(first, CallDeniedError)
    assert (first.server, first.tool, first.owner) == ("weather", "weather__forecast", "github")
    assert str(first) == (
        "server 'weather': tool 'weather__forecast': the call was denied and not sent to the "
        "server: its arguments carry a secret of server 'github' (in auth), and a server's "
        "secrets go to that server only; remove it from the arguments (a tool that asks for "
        "another server's credentials may be trying to steal them)"
    )
    assert_never_shown(*(str(r) for r in refusals))
    assert text_of(harmless) == "sunny in Oslo (auth: none)"
    assert got == [{"tool": "forecast", "city": "Oslo", "auth": "none"}]


async def test_a_servers_own_secret_goes_to_it_and_comes_back_redacted(tmp_path: Path) -> None:
    """Without block_secrets a server may get its own secret; every known secret in a
    result (text, structured content, an embedded resource's text) is redacted."""
    async with mcpmount.open_registry(poisoned_config(tmp_path)) as registry:
        echoed = await registry.call("github__echo", {"text": f"mine: {GH_TOKEN}"})
        who = await registry.call("weather__whoami")
        got = await received(registry, "github")
    mine = "mine: [redacted: secret of server 'github']"
    assert text_of(echoed) == mine
    assert got == [{"tool": "echo", "text": mine}]  # it reached the server, and is redacted here
    assert_never_shown(echoed, who)
    shown = "[redacted: secret of server 'weather']"
    assert text_of(who) == f"I am {shown}"
    embedded = who.content[1]
    assert isinstance(embedded, mcp_types.EmbeddedResource)
    assert isinstance(embedded.resource, mcp_types.TextResourceContents)
    assert embedded.resource.text == f"token={shown}"
    assert who.structured_content == {"token": shown, "nested": [{"again": f"Bearer {shown}"}]}


async def test_the_adapters_give_the_model_the_refusal_and_the_redacted_result(
    tmp_path: Path,
) -> None:
    """Through the Anthropic and OpenAI adapters the model reads the refusal as an error
    result, and the redacted result; the server never got the token."""
    async with mcpmount.open_registry(poisoned_config(tmp_path)) as registry:
        claude = AnthropicAdapter(registry)
        refused = await claude.run(
            {"id": "t1", "name": "weather__forecast", "input": {"city": "Oslo", "auth": GH_TOKEN}}
        )
        who = await claude.run({"id": "t2", "name": "weather__whoami", "input": {}})
        chat = OpenAIAdapter(registry)
        arguments = json.dumps({"city": "Oslo", "auth": GH_TOKEN})
        function = {"name": "weather__forecast", "arguments": arguments}
        chat_refused = await chat.run({"id": "c1", "type": "function", "function": function})
        got = await received(registry, "weather")
    assert refused["is_error"] is True
    assert "carry a secret of server 'github'" in str(refused["content"])
    assert "[redacted: secret of server 'weather']" in str(who["content"])
    assert str(chat_refused["content"]).startswith("Error: ")
    assert "carry a secret of server 'github'" in str(chat_refused["content"])
    assert_never_shown(refused, who, chat_refused)
    assert got == [{"tool": "whoami"}]


CREDENTIALS = {
    "a GitHub token": "ghp_" + "A1b2C3d4E5" * 4,
    "a fine-grained GitHub token": "github_pat_11ABCDEFG0" + "x1Y2z3" * 6,
    "an OpenAI key": "sk-proj-" + "Ab1Cd2Ef3G" * 3,
    "an Anthropic key": "sk-ant-api03-" + "Zy9Xw8Vu7T" * 3,
    "a Slack token": "xoxb-1234567890-abcdefghij",
    "an AWS key id": "AKIAIOSFODNN7EXAMPLE",
    "a JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "a PEM private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n",
}


async def test_block_secrets_refuses_a_servers_own_secret_and_credential_formats(
    tmp_path: Path,
) -> None:
    """With block_secrets on ``weather``: its own secret and every credential format are
    refused; ``github`` (off by default) still gets what looks like a credential."""
    config = poisoned_config(tmp_path, weather="block_secrets = true")
    async with mcpmount.open_registry(config) as registry:
        with pytest.raises(SecretRefusedError) as own:
            await registry.call("weather__echo", {"text": WEATHER_TOKEN})
        formats: dict[str, str] = {}
        for kind, credential in CREDENTIALS.items():
            with pytest.raises(SecretRefusedError) as caught:
                await registry.call("weather__echo", {"text": f"look: {credential}"})
            formats[kind] = str(caught.value)
            assert caught.value.owner is None
            await registry.call("github__echo", {"text": credential})  # not blocked there
        assert await received(registry, "weather") == []
        assert len(await received(registry, "github")) == len(CREDENTIALS)
    assert own.value.owner == "weather"
    assert "carry a secret of this server (in text), and block_secrets refuses secrets" in str(
        own.value
    )
    assert "set block_secrets = false for server 'weather'" in str(own.value)
    assert "what looks like a GitHub token" in formats["a fine-grained GitHub token"]
    assert "what looks like an AWS access key ID" in formats["an AWS key id"]
    assert "what looks like a private key" in formats["a PEM private key"]
    for kind, message in formats.items():
        assert CREDENTIALS[kind] not in message


async def test_the_registrys_block_secrets_is_every_servers_default(tmp_path: Path) -> None:
    """``[registry] block_secrets = true`` blocks on every server that does not say false."""
    config = poisoned_config(
        tmp_path, registry="block_secrets = true", weather="block_secrets = false"
    )
    async with mcpmount.open_registry(config) as registry:
        with pytest.raises(SecretRefusedError):
            await registry.call("github__echo", {"text": GH_TOKEN})
        await registry.call("weather__echo", {"text": CREDENTIALS["an OpenAI key"]})
        with pytest.raises(SecretRefusedError):  # another server's: whatever block_secrets says
            await registry.call("weather__echo", {"text": GH_TOKEN})


async def test_short_values_and_plain_words_are_not_guarded(tmp_path: Path) -> None:
    """Under 8 characters, or a plain word under 16 (``production``), a server's value is
    no secret for the guard: an ordinary call that happens to hold it goes through."""
    environ = {**ENVIRON, "MODE": "production", "WEATHER_TOKEN": "wx-1234"}
    async with mcpmount.open_registry(poisoned_config(tmp_path, environ=environ)) as registry:
        said = await registry.call("github__echo", {"text": "deploy to production with wx-1234"})
    assert text_of(said) == "deploy to production with wx-1234"


async def test_the_guard_follows_the_servers_that_are_mounted(tmp_path: Path) -> None:
    """A server's secrets are guarded while it is mounted, and again once it is back."""
    config = poisoned_config(tmp_path)
    async with Registry(config.settings) as registry:
        await registry.mount("weather", config.servers["weather"])
        unguarded = await registry.call("weather__echo", {"text": GH_TOKEN})
        await registry.mount("github", config.servers["github"])
        with pytest.raises(SecretRefusedError):
            await registry.call("weather__echo", {"text": GH_TOKEN})
        await registry.unmount("github")
        again = await registry.call("weather__echo", {"text": GH_TOKEN})
    assert text_of(unguarded) == text_of(again) == GH_TOKEN  # nobody's secret: not redacted


async def test_a_secret_of_a_server_mounted_later_is_redacted_from_results(tmp_path: Path) -> None:
    """What a result carries is redacted by the secrets known when it comes back."""
    config = poisoned_config(tmp_path)
    with anyio.fail_after(40):
        async with Registry(config.settings) as registry:
            await registry.mount("github", config.servers["github"])
            await registry.mount("weather", config.servers["weather"])
            who = await registry.call("github__whoami")
    assert text_of(who) == "I am [redacted: secret of server 'github']"
