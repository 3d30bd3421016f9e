"""Approval gates: which calls wait for the host's approver, and asking it.

A call is gated (`needs_approval`) when the registry's ``approval`` policy says so:

==================  =====================================================================
``"configured"``    (the default) the tool's raw name matches a glob of its server's
                    ``approve`` list
``"destructive"``   as above, or the tool may be destructive: by the MCP spec's defaults
                    a tool is destructive unless it says ``readOnlyHint: true`` or
                    ``destructiveHint: false``, and those two all-clear hints are believed
                    only from a server with ``trust_annotations = true`` (any server can
                    claim that ``delete_repo`` is read-only). ``destructiveHint: true``
                    gates whoever says it.
``"all"``           every call (``tool_search`` excepted: it runs in the registry)
==================  =====================================================================

A tool that matches a glob of its server's ``auto_approve`` (a host file's ``autoApprove``)
is never gated, whatever the policy.

A gated call waits for the approver before anything is sent; the server never sees a
denied call. With no approver, or one that raises, the call is denied. The wait is not
bounded by the call's timeout (a person may take a while to answer), which starts once the
call is approved; a caller that cannot wait cancels the call (e.g. ``anyio.move_on_after``
around `Registry.call`), and the approver's task is cancelled with it.

The gate is the innermost of a call's interceptors (`ApprovalGate`): the approver sees the
arguments every other hook let through, exactly as they will be sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import Any, cast

import mcp_types

from mcpmount.config import RegistrySettings, ServerSpec
from mcpmount.errors import CallDeniedError
from mcpmount.handlers import Approval, ApprovalRequest, Approver, Interceptor, ToolCall
from mcpmount.tool import MountedTool

__all__ = ["ApprovalGate", "needs_approval", "seek_approval", "warn_unmatched"]

logger = logging.getLogger(__name__)

NO_APPROVER = (
    "this tool needs approval, but no approver is configured: pass approver= to "
    "open_registry (or Registry), or remove the tool from the server's `approve` globs "
    "and the registry's `approval` policy"
)


def needs_approval(entry: MountedTool, spec: ServerSpec, policy: str) -> bool:
    """Return whether a call of ``entry`` must wait for the approver under ``policy`` (the
    registry's ``approval``; see the module docstring)."""
    if any(fnmatchcase(entry.raw_name, glob) for glob in spec.auto_approve):
        return False
    if policy == "all" or any(fnmatchcase(entry.raw_name, glob) for glob in spec.approve):
        return True
    return policy == "destructive" and _may_destroy(entry)


def warn_unmatched(server: str, spec: ServerSpec, tools: Iterable[mcp_types.Tool]) -> None:
    """Warn of each ``approve`` glob that matches none of ``tools``: a typo there would
    leave the tool it meant ungated."""
    names = [tool.name for tool in tools]
    for glob in spec.approve:
        if not any(fnmatchcase(name, glob) for name in names):
            logger.warning("server %r: approve glob %r matches none of its tools", server, glob)


def _may_destroy(entry: MountedTool) -> bool:
    hints = entry.definition.annotations
    if hints is None:
        return True
    if hints.destructive_hint is True:
        return True
    if not entry.annotations_trusted:
        return True
    return not (hints.read_only_hint is True or hints.destructive_hint is False)


async def seek_approval(
    approver: Approver | None,
    entry: MountedTool,
    arguments: Mapping[str, Any] | None,
    context: object | None,
) -> Mapping[str, Any]:
    """Ask ``approver`` about one gated call.

    Returns:
        The arguments it approved: a copy taken before asking, to be sent as they are,
        so a change the caller makes meanwhile is not sent unapproved.

    Raises:
        CallDeniedError: It denied the call, raised, answered something else, or there
            is no approver.
    """
    if approver is None:
        raise CallDeniedError(entry.server, entry.name, NO_APPROVER)
    approved = MappingProxyType(dict(arguments or {}))
    request = ApprovalRequest(entry.server, entry.name, entry.raw_name, approved, context)
    try:
        answer = cast("object", await approver(request))  # the host's code: check it
    except Exception as exc:
        logger.warning("server %r: the approver failed for %r: %r", entry.server, entry.name, exc)
        reason = f"the approver failed ({type(exc).__name__}), so the call was not approved"
        raise CallDeniedError(entry.server, entry.name, reason) from None
    if not isinstance(answer, Approval):
        logger.warning("the approver answered %s for %r, not an Approval", type(answer), entry.name)
        reason = "the approver gave no valid answer, so the call was not approved"
        raise CallDeniedError(entry.server, entry.name, reason)
    if not answer.allowed:
        logger.info("call of %r denied by the approver: %s", entry.name, answer.reason)
        raise CallDeniedError(entry.server, entry.name, answer.reason)
    return approved


class ApprovalGate:
    """Approval as an interceptor: a gated tool's hook asks the approver of the moment.

    Args:
        approver: Returns the approver to ask (the registry's, which the host may replace).
    """

    def __init__(self, approver: Callable[[], Approver | None]) -> None:
        self._approver = approver

    def hook(
        self, entry: MountedTool, spec: ServerSpec, settings: RegistrySettings
    ) -> Interceptor | None:
        """The hook of ``entry``'s calls, if they are gated."""
        if not needs_approval(entry, spec, settings.approval):
            return None

        async def ask(call: ToolCall) -> Mapping[str, Any]:
            return await seek_approval(self._approver(), entry, call.arguments, call.context)

        return Interceptor(before=ask, name="the approval gate")
