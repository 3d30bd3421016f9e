"""Interceptors: hooks before and after each tool call, the host's and the registry's own.

A call passes, in order, the host's ``before`` hooks (`Registry(interceptors=...)`,
`Registry.intercept`), the secret guard (`SecretGuard.arguments`), the server's
``before_call`` program (`ProgramGate`) and its approval gate (`ApprovalGate`); then it is
sent; then its result passes the host's ``after`` hooks in reverse order and the secret
guard's redaction (`SecretGuard.results`), last, so nothing a hook adds reaches the model
unredacted. The registry's hooks only refuse and redact: only the host's rewrite
arguments, so every check sees the arguments that will be sent.

Which hooks a tool's calls pass is worked out once per tool (`Plan`) and again only when
something it depends on changed: the host's interceptors, the known secrets, the tool's
server spec or the registry's settings. A tool with no hook pays one lookup per call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, cast

import mcp_types

from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import CallDeniedError, ResultWithheldError
from mcpmount.gates._approval import ApprovalGate
from mcpmount.gates._before_call import ProgramGate
from mcpmount.gates._secrets import ERROR_KINDS, Mounted, SecretGuard, check_request
from mcpmount.handlers import Approval, Approver, Interceptor, ToolCall
from mcpmount.processes import Reaper
from mcpmount.tool import MountedTool

__all__ = ["Interception", "Plan"]

logger = logging.getLogger(__name__)

Stage = Callable[[MountedTool, ServerSpec, RegistrySettings], Interceptor | None]
"""Gives the hook of one tool's calls, or None if its calls need none."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The hooks one tool's calls pass, and what they were worked out from."""

    before: tuple[Interceptor, ...]
    after: tuple[Interceptor, ...]
    entry: MountedTool
    spec: ServerSpec
    settings: RegistrySettings

    async def run_before(
        self, arguments: Mapping[str, Any] | None, context: object | None
    ) -> ToolCall:
        """Pass the call through every ``before`` hook; return it as it is to be sent.

        Raises:
            CallDeniedError: A hook refused the call (or failed); nothing was sent.
        """
        entry = self.entry
        call = ToolCall(
            entry.server,
            entry.name,
            entry.raw_name,
            MappingProxyType(dict(arguments or {})),
            context,
        )
        for hook in self.before:
            assert hook.before is not None
            try:
                answer = cast("object", await hook.before(call))  # the host's code: check it
            except CallDeniedError:
                raise
            except Exception as exc:
                logger.warning(
                    "server %r: %s failed for %r: %r", entry.server, hook.name, entry.name, exc
                )
                reason = f"{hook.name} failed ({type(exc).__name__}), so the call was not sent"
                raise CallDeniedError(entry.server, entry.name, reason) from None
            match answer:
                case None | Approval(allowed=True):
                    pass
                case Approval(reason=reason):
                    raise CallDeniedError(entry.server, entry.name, reason)
                case Mapping():
                    given = cast("Mapping[str, Any]", answer)
                    call = replace(call, arguments=MappingProxyType(dict(given)))
                case _:
                    logger.warning("%s answered %s for %r", hook.name, type(answer), entry.name)
                    reason = f"{hook.name} gave no valid answer, so the call was not sent"
                    raise CallDeniedError(entry.server, entry.name, reason)
        return call

    async def run_after(
        self, call: ToolCall, result: mcp_types.CallToolResult
    ) -> mcp_types.CallToolResult:
        """Pass a result through every ``after`` hook; return what the caller gets.

        Raises:
            ResultWithheldError: A hook failed; the result was withheld.
        """
        for hook in self.after:
            assert hook.after is not None
            try:
                answer = cast("object", await hook.after(call, result))
            except Exception as exc:
                logger.warning(
                    "server %r: %s failed on a result of %r: %r",
                    call.server,
                    hook.name,
                    call.tool,
                    exc,
                )
                reason = f"{hook.name} failed on it ({type(exc).__name__})"
                raise ResultWithheldError(call.server, call.tool, reason) from None
            if isinstance(answer, mcp_types.CallToolResult):
                result = answer
            elif answer is not None:
                logger.warning("%s answered %s for %r", hook.name, type(answer), call.tool)
                reason = f"{hook.name} gave no valid result"
                raise ResultWithheldError(call.server, call.tool, reason)
        return result


class Interception:
    """The hooks of every call: the host's interceptors and the registry's own.

    Args:
        servers: The registry's servers (their secrets, for the guard).
        interceptors: The host's, in order.
        approver: Returns the approver to ask (the registry's of the moment).
        reaper: Watches each ``before_call`` run.
    """

    def __init__(
        self,
        servers: Mounted,
        interceptors: Sequence[Interceptor],
        approver: Callable[[], Approver | None],
        reaper: Reaper,
    ) -> None:
        self.secrets = SecretGuard(servers)
        self._host = list(interceptors)
        self._changes = 0
        self._program = program = ProgramGate(reaper, self.secrets.redact)
        approval = ApprovalGate(approver)
        self._inner: tuple[Stage, ...] = (self.secrets.arguments, program.hook, approval.hook)
        self._plans: dict[str, Plan] = {}
        self._version = 0

    def add(self, interceptor: Interceptor) -> Callable[[], None]:
        """Add ``interceptor`` after the others; return what removes it (idempotent)."""
        self._host.append(interceptor)
        self._changes += 1

        def remove() -> None:
            kept = [each for each in self._host if each is not interceptor]
            if len(kept) < len(self._host):
                self._host = kept
                self._changes += 1

        return remove

    def plan(self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings) -> Plan:
        """The hooks ``entry``'s calls pass now."""
        version = self._changes + self.secrets.version()
        if self._version != version:  # every plan may be stale, and some tools gone
            self._plans.clear()
            self._version = version
        plan = self._plans.get(entry.name)
        if (
            plan is None
            or plan.entry is not entry
            or plan.spec is not spec
            or plan.settings is not settings
        ):
            stages: list[Stage] = [self.secrets.results]
            stages += [_always(interceptor) for interceptor in self._host]
            stages += self._inner
            hooks = [hook for stage in stages if (hook := stage(entry, spec, settings)) is not None]
            before = tuple(hook for hook in hooks if hook.before is not None)
            after = tuple(hook for hook in reversed(hooks) if hook.after is not None)
            plan = self._plans[entry.name] = Plan(before, after, entry, spec, settings)
        return plan

    async def check_request(self, call: ToolCall, spec: ServerSpec) -> None:
        """Pass a request that is no tool call (``call.kind``: a prompt get, a resource
        read, a completion) through the host's interceptors that asked for its kind, the
        secret guard and ``before_call``; there is no approval gate for these.

        Raises:
            CallDeniedError: A hook refused it (or failed); nothing was sent. The secret
                guard's refusal is a ``SecretRefusedError``.
        """
        kind = ERROR_KINDS[call.kind]
        for hook in [each for each in self._host if call.kind in each.kinds]:
            await _ask(hook, call, kind, self.secrets.redact)
        check_request(self.secrets.index(), call)
        if (program := self._program.of(spec)) is not None:
            await _ask(program, call, kind, self.secrets.redact)


async def _ask(hook: Interceptor, call: ToolCall, kind: str, redact: Callable[[str], str]) -> None:
    """Ask one ``before`` hook about a request that is no tool call: only a refusal counts."""
    if hook.before is None:
        return
    name = redact(call.tool)
    try:
        answer = cast("object", await hook.before(call))
    except CallDeniedError:
        raise
    except Exception as exc:
        logger.warning("server %r: %s failed for %r: %r", call.server, hook.name, name, exc)
        reason = f"{hook.name} failed ({type(exc).__name__}), so the request was not sent"
        raise CallDeniedError(call.server, name, reason, kind=kind) from None
    if isinstance(answer, Approval) and not answer.allowed:
        raise CallDeniedError(call.server, name, answer.reason, kind=kind)


def _always(interceptor: Interceptor) -> Stage:
    if "tools/call" not in interceptor.kinds:
        return lambda entry, spec, settings: None
    return lambda entry, spec, settings: interceptor
