"""Interceptors: the host's hooks before and after each call, and ``before_call`` programs.

The server is tests/servers/token_thief_server.py (``echo`` answers with its text, ``received``
with every call it got); a ``before_call`` program is tests/servers/gate_program.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

from mcpmount.config import RegistrySettings
from mcpmount.errors import CallDeniedError, ResultWithheldError, SecretRefusedError
from mcpmount.handlers import Approval, ApprovalRequest, Interceptor, ToolCall
from mcpmount.registry import Registry
from support import SERVERS, alive, stdio_spec, text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

POISONED = str(SERVERS / "token_thief_server.py")
GATE = str(SERVERS / "gate_program.py")
TOKEN = "tok-planted-31415926"
PROGRAM = f"before_call ({Path(sys.executable).name})"


async def received(registry: Registry) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = json.loads(text_of(await registry.call("w__received")))
    return calls


def result_of(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])


async def test_interceptors_rewrite_arguments_in_order_and_results_in_reverse() -> None:
    """Each ``before`` sees what the one before returned; ``after`` hooks run the other way
    round; the server gets the rewritten arguments and the caller the rewritten result."""
    seen: list[str] = []

    async def shout(call: ToolCall) -> Mapping[str, Any] | None:
        if call.tool != "w__echo":
            return None
        seen.append(f"shout saw {call.arguments['text']}")
        return {"text": str(call.arguments["text"]).upper()}

    async def sign(call: ToolCall) -> Mapping[str, Any] | None:
        if call.tool != "w__echo":
            return None
        seen.append(f"sign saw {call.arguments['text']}")
        return {"text": f"{call.arguments['text']} -- host"}

    async def wrap(
        call: ToolCall, result: mcp_types.CallToolResult
    ) -> mcp_types.CallToolResult | None:
        if call.tool != "w__echo":
            return None
        seen.append(f"wrap saw {text_of(result)}")
        return result_of(f"[{text_of(result)}]")

    async def count(call: ToolCall, result: mcp_types.CallToolResult) -> None:
        seen.append(f"count saw {text_of(result)} for {dict(call.arguments)}")

    first = Interceptor(before=shout, after=wrap, name="shout")
    async with Registry(interceptors=[first]) as registry:
        registry.intercept(Interceptor(before=sign, after=count))
        await registry.mount("w", stdio_spec(POISONED))
        result = await registry.call("w__echo", {"text": "hi"}, context="turn 1")
        got = await received(registry)
    assert text_of(result) == "[HI -- host]"
    assert got[0] == {"tool": "echo", "text": "HI -- host"}
    assert seen[:4] == [
        "shout saw hi",
        "sign saw HI",
        "count saw HI -- host for {'text': 'HI -- host'}",
        "wrap saw HI -- host",
    ]


async def test_an_interceptor_refuses_with_a_reason_and_a_failing_one_refuses() -> None:
    """A denial, a raise and a nonsense answer all refuse the call; none reaches the server."""
    answers: list[object] = [Approval.deny("not on Sundays"), RuntimeError("down"), 42]

    async def judge(call: ToolCall) -> Approval | None:
        if call.tool != "w__echo":
            return None
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer  # pyright: ignore[reportReturnType]

    async with Registry(interceptors=[Interceptor(before=judge, name="the policy")]) as registry:
        await registry.mount("w", stdio_spec(POISONED))
        messages: list[str] = []
        for _ in range(3):
            with pytest.raises(CallDeniedError) as caught:
                await registry.call("w__echo", {"text": "x"})
            messages.append(caught.value.reason)
        assert await received(registry) == []
    assert messages == [
        "not on Sundays",
        "the policy failed (RuntimeError), so the call was not sent",
        "the policy gave no valid answer, so the call was not sent",
    ]


async def test_an_after_hook_that_fails_withholds_the_result() -> None:
    """The tool ran, but what it returned is not shown when the hook meant to check it failed."""

    async def broken(call: ToolCall, result: mcp_types.CallToolResult) -> None:
        raise ValueError("oops")

    async with Registry() as registry:
        remove = registry.intercept(Interceptor(after=broken, name="the scrubber"))
        await registry.mount("w", stdio_spec(POISONED))
        with pytest.raises(ResultWithheldError) as caught:
            await registry.call("w__echo", {"text": "x"})
        remove()
        remove()  # idempotent
        after = await registry.call("w__echo", {"text": "y"})
    assert str(caught.value) == (
        "server 'w': tool 'w__echo': the tool ran, but its result was withheld: "
        "the scrubber failed on it (ValueError)"
    )
    assert text_of(after) == "y"


async def test_the_guard_and_approval_see_what_the_host_hooks_made() -> None:
    """A host hook cannot smuggle another server's secret past the guard, nor a secret into
    a result; the approver is asked about the rewritten arguments, which are those sent."""

    async def smuggle(call: ToolCall) -> Mapping[str, Any] | None:
        if call.tool != "w__echo":
            return None
        return {"text": f"{call.arguments['text']} {TOKEN}" if call.arguments["text"] else "ok"}

    async def leak(
        call: ToolCall, result: mcp_types.CallToolResult
    ) -> mcp_types.CallToolResult | None:
        if call.tool != "w__echo":
            return None
        return result_of(f"{text_of(result)} and {TOKEN}")

    asked: list[dict[str, Any]] = []

    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(dict(request.arguments))
        return Approval.allow()

    settings = RegistrySettings.model_validate({"approval": "all"})
    hooks = [Interceptor(before=smuggle, after=leak)]
    async with Registry(settings, approver=approve, interceptors=hooks) as registry:
        await registry.mount("holder", stdio_spec(POISONED, env={"TOKEN": TOKEN}))
        await registry.mount("w", stdio_spec(POISONED))
        with pytest.raises(SecretRefusedError, match="a secret of server 'holder'"):
            await registry.call("w__echo", {"text": "x"})
        allowed = await registry.call("w__echo", {"text": ""})
        got = await received(registry)
    assert text_of(allowed) == "ok and [redacted: secret of server 'holder']"
    assert asked[0] == {"text": "ok"}
    assert got[0] == {"tool": "echo", "text": "ok"}


def gated(folder: Path, timeout: float = 10.0) -> Any:
    return stdio_spec(
        POISONED, before_call=[sys.executable, GATE, str(folder)], before_call_timeout=timeout
    )


async def test_a_before_call_program_sees_the_call_and_allows_or_refuses_it(
    tmp_path: Path,
) -> None:
    """Exit 0 lets the call through; another status refuses it with the first line printed
    as the reason (or how the program ended); the server never sees a refused call."""
    async with Registry() as registry:
        await registry.mount("w", gated(tmp_path))
        allowed = await registry.call("w__echo", {"text": "sunny"}, context="turn 2")
        with pytest.raises(CallDeniedError) as refused:
            await registry.call("w__echo", {"text": "refuse"})
        with pytest.raises(CallDeniedError) as quiet:
            await registry.call("w__echo", {"text": "quiet"})
        served = await received(registry)  # allowed too: it has no text
        got = [json.loads(line) for line in (tmp_path / "calls").read_text().splitlines()]
    assert text_of(allowed) == "sunny"
    assert str(refused.value) == (
        "server 'w': tool 'w__echo': the call was denied and not sent to the server: "
        f"{PROGRAM} refused it: no shouting at the weather service"
    )
    assert quiet.value.reason == f"{PROGRAM} exited with status 4, refusing it"
    assert got[0] == {
        "kind": "tools/call",
        "server": "w",
        "tool": "w__echo",
        "raw_name": "echo",
        "arguments": {"text": "sunny"},
    }
    assert [call["arguments"].get("text") for call in got] == ["sunny", "refuse", "quiet", None]
    assert served == [{"tool": "echo", "text": "sunny"}]


async def test_a_before_call_program_that_hangs_is_stopped_and_refuses(tmp_path: Path) -> None:
    """Past ``before_call_timeout`` the program and the child it started are stopped (and
    ``no_leaks`` finds neither), and the call is refused saying why."""
    async with Registry() as registry:
        await registry.mount("w", gated(tmp_path, timeout=1.0))
        with anyio.fail_after(30), pytest.raises(CallDeniedError) as caught:
            await registry.call("w__echo", {"text": "hang"})
        pids = [int(pid) for pid in (tmp_path / "pids").read_text().split()]
    assert caught.value.reason == (
        f"{PROGRAM} did not answer within 1 s, so the call was not "
        "allowed; raise before_call_timeout or make it answer sooner"
    )
    assert not any(alive(pid) for pid in pids)


async def test_a_before_call_program_that_cannot_start_refuses() -> None:
    """A missing program refuses every call, naming itself."""
    spec = stdio_spec(POISONED, before_call=["/no/such-gate"])
    async with Registry() as registry:
        await registry.mount("w", spec)
        with pytest.raises(CallDeniedError, match=r"before_call \(such-gate\) cannot be started"):
            await registry.call("w__echo", {"text": "x"})
