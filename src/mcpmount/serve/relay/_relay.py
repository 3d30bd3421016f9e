"""What upstream servers ask of their client, relayed to the downstream client of the call.

An upstream server may ask mid-call for a model completion (sampling), for the user's
input (elicitation, form or URL mode) or for its roots; a gated call waits for approval.
`Relay` gives the registry `ClientHandlers` and an approver that answer through the
downstream client whose ``tools/call`` is in flight (`Downstream`, passed to
`Registry.call` as ``context=`` and handed back as `Asker.context`). How that client is
asked in each protocol era (a request on the call's stream, or ``InputRequiredResult``
rounds) is `mcpmount.serve.relay`'.

A URL-mode elicitation that a handshake-era server says is complete
(``notifications/elicitation/complete``) is told to the handshake-era client that the
elicitation went to, with the same ``elicitationId``, on its session (the call may be
over by then); the 2026-07-28 era has no such notice, so a 2026-era client is not told.

Sampling is offered upstream with ``tools`` (tool-enabled sampling), like every other
capability, before any client connects, so that no server hides what needs it; a request
with tools for a client that did not declare ``sampling.tools`` is not sent to it, and the
server gets an error saying why.

Which call asked is told by the transport where it can be (`mcpmount.upstream.Asking`):
over streamable HTTP a handshake-era server asks on the stream of the request that caused
the question, and a 2026-07-28 server within that request's result. When the client did
not declare the capability, or no call can be told (a question outside a call, or one of
a handshake-era stdio server with several calls in flight), the safe answers apply and the
log says so: elicitation is declined, sampling refused with an error saying the client
cannot sample, and a gated call is denied; roots are the server's configured ``roots``
(the registry's answer when the handler says None), with a warning only when there are
none. The log then suggests ``sessions = "per_client"``: each client's calls then have
an upstream session of their own, so a question asked there has one client to go to.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import anyio
import mcp_types
from mcp.server.session import ServerSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.handlers import Approval, ApprovalRequest, Asker, ClientHandlers, LogHandler
from mcpmount.serve.relay._rounds import Answer, Downstream, Rounds, error

__all__ = ["Downstream", "Relay"]

logger = logging.getLogger(__name__)

_SHOWN_ARGUMENTS: Final = 2000
"""Characters of a gated call's arguments shown in the approval question."""

_SAMPLING: Final = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())
"""What serve offers upstream with sampling: tool use too (refused per client, above)."""

MAX_URL_ELICITATIONS: Final = 1000
"""How many accepted URL elicitations are remembered, awaiting their completion notice."""

_NOTICE_SECONDS: Final = 5.0
"""How long a downstream session gets to take a completion notice before it is dropped."""


class Relay:
    """The downstream side of what upstream servers ask; run its `rounds` while serving.

    Args:
        round_timeout: Seconds a 2026-era call waits for its client to come back with
            the answers (and a handshake-era question for its answer) before it is
            cancelled.
    """

    def __init__(self, *, round_timeout: float = 120.0) -> None:
        self.rounds = Rounds(round_timeout)
        self._url_elicitations: OrderedDict[tuple[str, str], ServerSession] = OrderedDict()
        """(server, elicitation id) → the handshake-era session the URL elicitation went to."""

    def handlers(self, logging: LogHandler | None = None) -> ClientHandlers:
        """The registry's handlers: each asks the downstream client of the asking call."""
        return ClientHandlers(
            sampling=self._sample,
            sampling_capability=_SAMPLING,
            elicitation=self._elicit,
            roots=self._roots,
            elicitation_complete=self._elicitation_complete,
            logging=logging,
        )

    # -- the registry's handlers ------------------------------------------------------------

    def _downstream(
        self, asker: Asker, what: str, capable: Callable[[Downstream], bool], *, warn: bool = True
    ) -> Downstream | None:
        call = asker.context
        if not isinstance(call, Downstream):
            if not warn:
                return None
            logger.warning(
                "server %r asked for %s outside a call that can be told (none, or several at "
                "once); answered as a client that cannot. If it asks outside its requests, "
                'give it sessions = "per_client", so that each client\'s questions reach it',
                asker.server,
                what,
            )
            return None
        if not call.can_ask() or not capable(call):
            if not warn:
                return None
            logger.warning(
                "server %r asked for %s during %s; the client does not offer it",
                asker.server,
                what,
                asker.tool,
            )
            return None
        return call

    async def _sample(
        self, asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        tools = params.tools is not None or params.tool_choice is not None
        what = "sampling with tools" if tools else "sampling"
        call = self._downstream(asker, what, _can_sample(params))
        if call is None:
            message = f"the client of mcpmount serve cannot sample (asked by {asker.server!r})"
            if tools:
                message = (
                    f"the client of mcpmount serve cannot sample with tools (asked by "
                    f"{asker.server!r}); it did not declare sampling.tools: sample without "
                    "tools, or ask its user to enable tool use in sampling"
                )
            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=message)
        answer = await call.ask(mcp_types.CreateMessageRequest(params=params))
        if isinstance(
            answer, mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools
        ):
            return answer
        return _expected(answer, "a sampling result")

    async def _elicit(
        self, asker: Asker, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        url = isinstance(params, mcp_types.ElicitRequestURLParams)
        call = self._downstream(
            asker, "URL elicitation" if url else "elicitation", _can_elicit(url)
        )
        if call is None:
            return mcp_types.ElicitResult(action="decline")
        key = _completable(asker, params, call)
        if key is not None:
            self._remember(key, call.ctx.session)
        answer = await call.ask(mcp_types.ElicitRequest(params=params))
        if key is not None and not (
            isinstance(answer, mcp_types.ElicitResult) and answer.action == "accept"
        ):
            self._url_elicitations.pop(key, None)  # nothing will complete
        if isinstance(answer, mcp_types.ElicitResult):
            return answer
        return _expected(answer, "an elicitation result")

    def _remember(self, key: tuple[str, str], session: ServerSession) -> None:
        self._url_elicitations[key] = session
        self._url_elicitations.move_to_end(key)
        while len(self._url_elicitations) > MAX_URL_ELICITATIONS:
            self._url_elicitations.popitem(last=False)

    async def _elicitation_complete(self, server: str, elicitation_id: str) -> None:
        """Tell the client a URL elicitation went to that the server says it is complete."""
        session = self._url_elicitations.pop((server, elicitation_id), None)
        if session is None:
            logger.info(
                "server %r: elicitation %r is complete, but no handshake-era client waits for it",
                server,
                elicitation_id,
            )
            return
        params = mcp_types.ElicitCompleteNotificationParams(elicitation_id=elicitation_id)
        try:
            with anyio.fail_after(_NOTICE_SECONDS):
                await session.send_notification(mcp_types.ElicitCompleteNotification(params=params))
        except Exception as exc:  # a gone session: nobody left to tell
            logger.info(
                "server %r: could not tell the client elicitation %r is complete: %r",
                server,
                elicitation_id,
                exc,
            )

    async def _roots(self, asker: Asker) -> mcp_types.ListRootsResult | mcp_types.ErrorData | None:
        """The roots of the asking call's client; None (the configured roots, which the
        registry logs if there are none) when no client can tell."""
        call = self._downstream(
            asker, "roots", lambda c: c.capabilities.roots is not None, warn=False
        )
        if call is None:
            return None
        answer = await call.ask(mcp_types.ListRootsRequest())
        if isinstance(answer, mcp_types.ListRootsResult):
            return answer
        return _expected(answer, "a list of roots")

    async def approve(self, request: ApprovalRequest) -> Approval:
        """Ask the downstream client (form elicitation) whether a gated call may run."""
        asker = Asker(request.server, request.tool, request.context)
        call = self._downstream(asker, "approval", _can_elicit(url=False))
        if call is None:
            return Approval.deny(
                f"{request.tool} needs approval, and the client of mcpmount serve cannot be "
                "asked (it offers no elicitation); the call was not made"
            )
        shown = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False, default=repr)
        if len(shown) > _SHOWN_ARGUMENTS:
            shown = shown[:_SHOWN_ARGUMENTS] + " …"
        message = (
            f"Allow the server {request.server!r} to run its tool {request.raw_name!r} "
            f"({request.tool}) with these arguments?\n{shown}"
        )
        form = mcp_types.ElicitRequestFormParams(
            message=message, requested_schema={"type": "object", "properties": {}}
        )
        answer = await call.ask(mcp_types.ElicitRequest(params=form))
        if isinstance(answer, mcp_types.ElicitResult) and answer.action == "accept":
            return Approval.allow()
        if isinstance(answer, mcp_types.ElicitResult):
            return Approval.deny(f"the user did not approve {request.tool} ({answer.action})")
        problem = _expected(answer, "an elicitation result").message
        return Approval.deny(f"{request.tool} could not be approved: {problem}")


def _completable(
    asker: Asker, params: mcp_types.ElicitRequestParams, call: Downstream
) -> tuple[str, str] | None:
    """The key under which a URL elicitation's completion notice is told to ``call``'s
    client: only a handshake-era client has the notice, and only an id can be matched."""
    if not isinstance(params, mcp_types.ElicitRequestURLParams) or params.elicitation_id is None:
        return None
    if call.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    return (asker.server, params.elicitation_id)


def _can_sample(params: mcp_types.CreateMessageRequestParams) -> Callable[[Downstream], bool]:
    def capable(call: Downstream) -> bool:
        sampling = call.capabilities.sampling
        if sampling is None:
            return False
        return (params.tools is None and params.tool_choice is None) or sampling.tools is not None

    return capable


def _can_elicit(url: bool) -> Callable[[Downstream], bool]:
    def capable(call: Downstream) -> bool:
        elicitation = call.capabilities.elicitation
        if elicitation is None:
            return False
        if url:
            return elicitation.url is not None
        # An empty elicitation capability means form mode (the spec's default).
        return elicitation.form is not None or elicitation.url is None

    return capable


def _expected(answer: Answer, what: str) -> mcp_types.ErrorData:
    if isinstance(answer, mcp_types.ErrorData):
        return answer
    return error(f"the client answered with something other than {what}")
