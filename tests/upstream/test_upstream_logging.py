"""An upstream server's log messages reach Python logging (or the host's handler), redacted,
at the level the host asked for, in both protocol eras."""

from __future__ import annotations

import json
import logging
import os
import signal
from typing import Literal

import anyio
import mcp_types
import pytest

from asking_support import BEHAVIOUR, asking
from mcpmount.handlers import ClientHandlers
from mcpmount.registry import Registry
from support import record_pids, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

Era = Literal["auto", "legacy"]
ERAS: list[Era] = ["auto", "legacy"]

EVERY_LEVEL = [
    (logging.DEBUG, "asking: debug: hi"),
    (logging.INFO, "asking: info: hi"),
    (logging.INFO, "[notice] asking: notice: hi"),
    (logging.WARNING, "asking: warning: hi"),
    (logging.ERROR, "asking: error: hi"),
    (logging.CRITICAL, "asking: critical: hi"),
    (logging.CRITICAL, "[alert] asking: alert: hi"),
    (logging.CRITICAL, '[emergency] {"text":"hi","level":"emergency"}'),
]
"""What the asking server's ``log("hi")`` becomes, at every MCP level, in order."""


SECRET = "sk-live-0123456789"


@pytest.fixture(name="logs")
def logs_fixture(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every upstream message, whatever the level."""
    caplog.set_level(logging.DEBUG, logger="mcpmount.server")
    return caplog


def _upstream(logs: pytest.LogCaptureFixture, server: str = "a") -> list[tuple[int, str]]:
    name = f"mcpmount.server.{server}"
    return [(r.levelno, r.getMessage()) for r in logs.records if r.name == name]


async def _level_set(registry: Registry) -> object:
    return json.loads(text_of(await registry.call("a__calls")))["level"]


@pytest.mark.parametrize("era", ERAS)
async def test_before_a_level_is_set_nothing_is_asked_and_servers_keep_their_default(
    era: Era, logs: pytest.LogCaptureFixture
) -> None:
    """Handshake era: this server sends everything by default; 2026-07-28: nothing, since
    no request opted in. Either way no ``logging/setLevel`` was sent."""
    async with Registry() as registry:
        await registry.mount("a", asking(protocol=era))
        await registry.call("a__log", {"text": "hi"})
        assert await _level_set(registry) is None
    assert _upstream(logs) == (EVERY_LEVEL if era == "legacy" else [])


@pytest.mark.parametrize("era", ERAS)
async def test_set_log_level_reaches_every_server_now_and_those_mounted_later(
    era: Era, logs: pytest.LogCaptureFixture
) -> None:
    """Messages below the level stop coming, from a server mounted before and after."""
    async with Registry() as registry:
        await registry.mount("a", asking(protocol=era))
        await registry.set_log_level("error")
        await registry.mount("b", asking(protocol=era))
        await registry.call("a__log", {"text": "hi"})
        await registry.call("b__log", {"text": "hi"})
        if era == "legacy":  # sent as logging/setLevel, which the server advertises
            assert await _level_set(registry) == "error"
    at_least_error = [(level, text) for level, text in EVERY_LEVEL if level >= logging.ERROR]
    assert _upstream(logs, "a") == at_least_error
    assert _upstream(logs, "b") == at_least_error


@pytest.mark.parametrize("era", ERAS)
async def test_a_servers_secrets_are_redacted_from_its_log_messages(
    era: Era, logs: pytest.LogCaptureFixture
) -> None:
    """A server may log its environment; its secret values never reach the log."""
    async with Registry() as registry:
        await registry.mount("a", asking(protocol=era, env={"API_KEY": SECRET}))
        await registry.set_log_level("warning")
        await registry.call("a__log", {"text": f"key={SECRET}"})
    messages = [text for _, text in _upstream(logs)]
    assert "asking: warning: key=***" in messages
    assert '[emergency] {"text":"key=***","level":"emergency"}' in messages
    assert not [text for text in messages if SECRET in text]


@pytest.mark.parametrize("era", ERAS)
async def test_a_log_handler_takes_the_messages_instead_of_python_logging(
    era: Era, logs: pytest.LogCaptureFixture
) -> None:
    """It gets the namespace and the message (redacted too); Python logging gets nothing."""
    taken: list[tuple[str, mcp_types.LoggingMessageNotificationParams]] = []

    async def take(server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
        taken.append((server, params))

    async with Registry(handlers=ClientHandlers(logging=take)) as registry:
        await registry.mount("a", asking(protocol=era, env={"API_KEY": SECRET}))
        await registry.set_log_level("critical")
        await registry.call("a__log", {"text": SECRET})
    assert [(s, p.level, p.logger, p.data) for s, p in taken] == [
        ("a", "critical", "asking", "critical: ***"),
        ("a", "alert", "asking", "alert: ***"),
        ("a", "emergency", None, {"text": "***", "level": "emergency"}),
    ]
    assert _upstream(logs) == []


async def test_a_failing_log_handler_is_logged_and_the_call_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A log handler that raises costs its message, nothing else."""

    async def fail(server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
        raise RuntimeError("no disk")

    async with Registry(handlers=ClientHandlers(logging=fail)) as registry:
        await registry.mount("a", asking(protocol="legacy"))
        await registry.set_log_level("emergency")
        assert text_of(await registry.call("a__log", {"text": "hi"})) == "logged"
    failed = [r.getMessage() for r in caplog.records if "log handler failed" in r.getMessage()]
    assert failed == ["server 'a': the log handler failed: RuntimeError('no disk')"]


async def test_a_restarted_server_gets_the_level_again(logs: pytest.LogCaptureFixture) -> None:
    """The level outlives the connection: the new process is asked for it too."""
    async with Registry() as registry:
        await registry.mount("a", asking(protocol="legacy", restart="on-failure"))
        record_pids(registry)
        await registry.set_log_level("critical")
        pid = registry.status()[0].pid
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)
        with anyio.fail_after(BEHAVIOUR):
            while registry.status()[0].restarts != 1:
                await anyio.sleep(0.02)
        record_pids(registry)
        assert registry.status()[0].pid != pid
        assert await _level_set(registry) == "critical"
        await registry.call("a__log", {"text": "hi"})
    assert _upstream(logs) == [(lvl, text) for lvl, text in EVERY_LEVEL if lvl >= logging.CRITICAL]
