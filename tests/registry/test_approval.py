"""Approval gates: a gated call waits for the approver, and a denied call never reaches the
server (its own counter proves it); the model sees the reason as an error result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client

from asking_support import ASKING, BEHAVIOUR, asking
from mcpmount.adapters import AnthropicAdapter
from mcpmount.config import RegistrySettings, load_config
from mcpmount.errors import CallDeniedError, CallError, ConfigError
from mcpmount.handlers import Approval, ApprovalRequest, Approver
from mcpmount.registry import Registry
from mcpmount.serve import RegistryServer
from support import text_of

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

Era = Literal["auto", "legacy"]

GLOBS = ["delete_*", "*write*"]


class Desk:
    """An approver that records each request and answers from a table (default: allow)."""

    def __init__(self, deny: dict[str, str] | None = None) -> None:
        self.deny = deny or {}
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        if request.raw_name in self.deny:
            return Approval.deny(self.deny[request.raw_name])
        return Approval.allow()


async def _ran(registry: Registry) -> dict[str, Any]:
    """How many times each tool of server ``a`` ran, by its own count."""
    ran: dict[str, Any] = json.loads(text_of(await registry.call("a__calls")))
    return ran


def _registry(approver: Approver | None, approval: str = "configured") -> Registry:
    settings = RegistrySettings.model_validate({"approval": approval})
    return Registry(settings, approver=approver)


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_denied_call_never_reaches_the_server_and_says_why(era: Era) -> None:
    """The approver sees the call first; an allowed one runs, a denied one is not sent."""
    desk = Desk(deny={"delete_thing": "the user said no: keep it"})
    async with _registry(desk) as registry:
        await registry.mount("a", asking(protocol=era, approve=GLOBS))
        with pytest.raises(CallDeniedError) as caught:
            await registry.call("a__delete_thing", {"name": "x"}, context="turn-7")
        allowed = await registry.call("a__write_file", {"path": "p"})
        free = await registry.call("a__read_thing", {"name": "r"})
        ran = await _ran(registry)
    assert str(caught.value) == (
        "server 'a': tool 'a__delete_thing': the call was denied and not sent to the server: "
        "the user said no: keep it"
    )
    assert (caught.value.server, caught.value.tool) == ("a", "a__delete_thing")
    assert text_of(allowed) == "wrote p"
    assert text_of(free) == "read r"
    assert "delete_thing" not in ran
    assert (ran["write_file"], ran["read_thing"]) == (1, 1)
    assert [(r.server, r.tool, r.raw_name, dict(r.arguments), r.context) for r in desk.asked] == [
        ("a", "a__delete_thing", "delete_thing", {"name": "x"}, "turn-7"),
        ("a", "a__write_file", "write_file", {"path": "p"}, None),
    ]


async def test_without_an_approver_a_gated_call_is_denied_with_how_to_configure_one() -> None:
    """No approver is no approval."""
    async with _registry(None) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        with pytest.raises(CallDeniedError, match="no approver is configured: pass approver="):
            await registry.call("a__delete_thing", {"name": "x"})
        assert "delete_thing" not in await _ran(registry)


async def test_an_approver_that_raises_or_answers_nonsense_denies() -> None:
    """Failing to approve is not approving."""
    outcomes: list[object] = [RuntimeError("approval service down"), "yes"]

    async def broken(request: ApprovalRequest) -> Approval:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome  # pyright: ignore[reportReturnType]

    async with _registry(broken) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        with pytest.raises(CallDeniedError, match=r"approver failed \(RuntimeError\)"):
            await registry.call("a__delete_thing", {"name": "x"})
        with pytest.raises(CallDeniedError, match="approver gave no valid answer"):
            await registry.call("a__delete_thing", {"name": "x"})
        assert "delete_thing" not in await _ran(registry)


@pytest.mark.parametrize(
    ("approval", "trusted", "gated"),
    [
        ("configured", False, []),
        # Untrusted hints cannot talk a tool out of the gate; destructiveHint gates anyway.
        ("destructive", False, ["calls", "delete_thing", "read_thing", "write_file"]),
        ("destructive", True, ["calls", "delete_thing", "write_file"]),
        ("all", True, ["calls", "delete_thing", "read_thing", "write_file"]),
    ],
)
async def test_the_registry_policy_decides_which_tools_are_gated(
    approval: str, trusted: bool, gated: list[str]
) -> None:
    """ "destructive": all but a trusted server's read-only or non-destructive tools."""
    desk = Desk()
    async with _registry(desk, approval) as registry:
        await registry.mount("a", asking(trust_annotations=trusted))
        await registry.call("a__delete_thing", {"name": "n"})
        await registry.call("a__write_file", {"path": "p"})
        await registry.call("a__read_thing", {"name": "n"})
        await registry.call("a__calls")
    assert sorted(r.raw_name for r in desk.asked) == gated


async def test_the_approvers_wait_is_not_bounded_by_the_call_timeout() -> None:
    """A person may take longer than the call's timeout, which starts once approved."""

    async def slow_person(request: ApprovalRequest) -> Approval:
        await anyio.sleep(1.0)
        return Approval.allow()

    async with _registry(slow_person) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        with anyio.fail_after(BEHAVIOUR):
            result = await registry.call("a__delete_thing", {"name": "x"}, timeout=0.2)
        assert text_of(result) == "deleted x"


async def test_a_caller_that_stops_waiting_cancels_the_approval_and_sends_nothing() -> None:
    """Cancelling the call cancels the approver's wait; the server never hears of it."""
    cancelled = anyio.Event()
    asked = anyio.Event()

    async def never(request: ApprovalRequest) -> Approval:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with _registry(never) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        with anyio.fail_after(BEHAVIOUR):
            async with anyio.create_task_group() as tg:
                tg.start_soon(registry.call, "a__delete_thing", {"name": "x"})
                await asked.wait()
                tg.cancel_scope.cancel()
            await cancelled.wait()
        assert "delete_thing" not in await _ran(registry)


async def test_the_arguments_approved_are_the_arguments_sent() -> None:
    """A change the caller makes while the approver decides is not sent unapproved."""
    arguments = {"name": "harmless"}

    async def approve_after_a_change(request: ApprovalRequest) -> Approval:
        arguments["name"] = "everything"
        return Approval.allow() if request.arguments["name"] == "harmless" else Approval.deny("")

    async with _registry(approve_after_a_change) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        result = await registry.call("a__delete_thing", arguments)
    assert text_of(result) == "deleted harmless"


async def test_a_denial_is_an_error_result_the_model_sees_through_serve_and_adapters() -> None:
    """Not an exception that ends the host's turn: an isError result with the reason."""
    desk = Desk(deny={"delete_thing": "not on a Friday"})
    async with _registry(desk) as registry:
        await registry.mount("a", asking(approve=GLOBS))
        adapter = AnthropicAdapter(registry)
        block = await adapter.run(
            {"type": "tool_use", "id": "t1", "name": "a__delete_thing", "input": {"name": "x"}}
        )
        async with Client(RegistryServer(registry).server) as client:
            served = await client.call_tool("a__delete_thing", {"name": "x"})
        ran = await _ran(registry)
    assert block["is_error"] is True
    assert "not on a Friday" in json.dumps(block["content"])
    assert served.is_error
    assert "denied and not sent to the server: not on a Friday" in text_of(served)
    assert "delete_thing" not in ran


def test_a_denial_is_a_call_error() -> None:
    """Hosts that catch CallError (or PermissionError) catch denials too."""
    error = CallDeniedError("a", "a__x", "")
    assert isinstance(error, CallError)
    assert isinstance(error, PermissionError)
    assert error.reason == "no reason given"


async def test_an_approve_glob_that_matches_no_tool_is_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A typo in `approve` would leave the tool it meant ungated: say so at mount."""
    async with _registry(Desk()) as registry:
        await registry.mount("a", asking(approve=["delete_*", "delet_thing"]))
    warned = [r.getMessage() for r in caplog.records if "approve glob" in r.getMessage()]
    assert warned == ["server 'a': approve glob 'delet_thing' matches none of its tools"]


def test_approve_and_approval_are_read_from_a_config_file(tmp_path: Path) -> None:
    """`approve` per server, `approval` for the registry (also MCPMOUNT_APPROVAL)."""
    path = tmp_path / "gated.toml"
    path.write_text(
        '[registry]\napproval = "destructive"\n\n'
        '[servers.a]\ncommand = "python"\napprove = ["delete_*"]\n'
    )
    config = load_config(path)
    assert config.settings.approval == "destructive"
    assert config.servers["a"].approve == ["delete_*"]


def test_an_unknown_approval_policy_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    """A policy mcpmount does not know must not silently gate less."""
    path = tmp_path / "gated.toml"
    path.write_text('[registry]\napproval = "some"\n\n[servers.a]\ncommand = "python"\n')
    with pytest.raises(ConfigError, match="approval"):
        load_config(path)


def test_mcpmount_tools_says_which_calls_need_approval(tmp_path: Path) -> None:
    """`--json` has an ``approval`` flag per tool; the table grows an approval column."""
    path = tmp_path / "gated.toml"
    args = json.dumps([ASKING])
    path.write_text(
        f'[servers.a]\ncommand = "{sys.executable}"\nargs = {args}\napprove = ["delete_*"]\n'
    )
    command = [sys.executable, "-m", "mcpmount", "tools", str(path)]
    listed = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=60)
    table = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [row["name"] for row in rows if row["approval"]] == ["a__delete_thing"]
    assert table.returncode == 0, table.stderr
    assert "approval" in table.stdout
    assert [line for line in table.stdout.splitlines() if "needed" in line] == [
        line for line in table.stdout.splitlines() if "a__delete_thing" in line
    ]
