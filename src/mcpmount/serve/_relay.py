"""What upstream servers ask of their client, relayed to the downstream client of the call.

An upstream server may ask mid-call for a model completion (sampling), for the user's
input (elicitation, form or URL mode) or for its roots; a gated call waits for approval.
`Relay` gives the registry `ClientHandlers` and an approver that answer through the
downstream client whose ``tools/call`` is in flight (`Downstream`, passed to
`Registry.call` as ``context=`` and handed back as `Asker.context`):

- Handshake era (up to 2025-11-25): the question goes to that client's session as a
  request related to its ``tools/call``, so streamable HTTP carries it on that call's
  stream.
- 2026-07-28 era: a server cannot ask its client mid-request. The upstream call runs in
  a task the relay owns, and ``tools/call`` answers with an ``InputRequiredResult``
  holding the questions asked so far; the client answers them and calls again with
  ``inputResponses`` and the ``requestState`` (a one-time random key of the waiting
  call), and the relay resumes that call. A client that never comes back: the waiting
  call is cancelled after `round_timeout` seconds, and its key forgotten.

When the client did not declare the capability, or no call can be told (a question
outside a call, or several calls of that server at once), the safe answers apply and
the log says so: elicitation is declined, sampling refused with an error saying the
client cannot sample, roots are an empty list, and a gated call is denied.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.handlers import Approval, ApprovalRequest, Asker, ClientHandlers, LogHandler

__all__ = ["Downstream", "Relay"]

logger = logging.getLogger(__name__)

MAX_WAITING: Final = 1000
"""How many 2026-era calls may wait for their client's answers at once."""

_SHOWN_ARGUMENTS: Final = 2000
"""Characters of a gated call's arguments shown in the approval question."""

Answer = mcp_types.InputResponse | mcp_types.ErrorData
T = TypeVar("T")


class Downstream:
    """One downstream ``tools/call`` in flight, as the relay's handlers see it.

    Args:
        ctx: The request context of the call (of its latest round, in the 2026 era).
        timeout: Seconds one question may wait for the client's answer.
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float) -> None:
        self.ctx = ctx
        self.timeout = timeout

    @property
    def capabilities(self) -> mcp_types.ClientCapabilities:
        """What the downstream client declared it can answer."""
        return self.ctx.session.client_capabilities or mcp_types.ClientCapabilities()

    def can_ask(self) -> bool:
        """Whether a question can reach this client at all (stateless HTTP: no)."""
        return self.ctx.session.can_send_request

    async def ask(self, request: mcp_types.InputRequest) -> Answer:
        """Ask the downstream client; an error it answers comes back as `ErrorData`."""
        metadata = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        params = request.params
        if isinstance(params, mcp_types.ElicitRequestURLParams) and params.elicitation_id is None:
            # 2026-07-28 dropped the id; a handshake-era client refuses a URL request without.
            params = params.model_copy(update={"elicitation_id": secrets.token_hex(8)})
            request = mcp_types.ElicitRequest(params=params)
        try:
            result = await self.ctx.session.send_request(
                request, _result_type(request), self.timeout, metadata=metadata
            )
        except MCPError as exc:
            return exc.error
        return result

    async def report_progress(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        await self.ctx.session.report_progress(progress, total, message)


class _RoundTrips(Downstream):
    """A 2026-era call: its questions wait for the client's next round."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float) -> None:
        super().__init__(ctx, timeout)
        self.scope = anyio.CancelScope()
        """Around the upstream call; its deadline is set while the client is away."""
        self.done = False
        self.result: object = None
        self.error: BaseException | None = None
        self._keys = itertools.count(1)
        self._asked: dict[str, mcp_types.InputRequest] = {}
        self._sent: dict[str, mcp_types.InputRequest] = {}
        self._answers: dict[str, Answer] = {}
        self._answered: dict[str, anyio.Event] = {}
        self._wake = anyio.Event()

    def can_ask(self) -> bool:
        return True

    async def ask(self, request: mcp_types.InputRequest) -> Answer:
        if self.done:
            return _error("the call already ended")
        key = f"q{next(self._keys)}"
        self._asked[key] = request
        answered = self._answered[key] = anyio.Event()
        self._wake.set()
        await answered.wait()
        return self._answers.pop(key)

    async def wait_for_news(self) -> None:
        """Wait until the call has ended or has questions for the client."""
        while not self.done and not self._asked:
            await self._wake.wait()
            self._wake = anyio.Event()

    def take_questions(self) -> dict[str, mcp_types.InputRequest]:
        asked, self._asked = self._asked, {}
        self._sent.update(asked)
        return asked

    def give_answers(self, responses: dict[str, mcp_types.InputResponse]) -> None:
        """Release every sent question: with the client's answer, or with an error."""
        sent, self._sent = self._sent, {}
        for key, request in sent.items():
            response = responses.get(key)
            if response is None or not isinstance(response, _result_type(request)):
                self._release(key, _error(f"the client gave no answer to {request.method}"))
            else:
                self._release(key, response)

    def finish(self) -> None:
        """The call ended: release every question still waiting, with an error."""
        self.done = True
        for key in [*self._asked, *self._sent]:
            self._release(key, _error("the call ended before the client answered"))
        self._asked.clear()
        self._sent.clear()
        self._wake.set()

    def _release(self, key: str, answer: Answer) -> None:
        self._answers[key] = answer
        self._answered.pop(key).set()


class Relay:
    """The downstream side of what upstream servers ask; run it (`running`) while serving.

    Args:
        round_timeout: Seconds a 2026-era call waits for its client to come back with
            the answers (and a handshake-era question for its answer) before it is
            cancelled.
    """

    def __init__(self, *, round_timeout: float = 120.0) -> None:
        self.round_timeout = round_timeout
        self._waiting: dict[str, _RoundTrips] = {}
        self._tg: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[Relay]:
        """Own the 2026-era calls while entered; leaving cancels those still running."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield self
            finally:
                self._tg = None
                self._waiting.clear()
                tg.cancel_scope.cancel()

    def handlers(self, logging: LogHandler | None = None) -> ClientHandlers:
        """The registry's handlers: each asks the downstream client of the asking call."""
        return ClientHandlers(
            sampling=self._sample, elicitation=self._elicit, roots=self._roots, logging=logging
        )

    # -- calls ------------------------------------------------------------------------------

    async def call(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        run: Callable[[Downstream], Awaitable[T]],
    ) -> T | mcp_types.InputRequiredResult:
        """Run one ``tools/call`` round: ``run`` is the upstream call, given its `Downstream`.

        Raises:
            MCPError: A 2026-era retry names no waiting call (unknown or expired).
            Exception: What ``run`` raised.
        """
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await run(Downstream(ctx, self.round_timeout))
        trip = self._resume(ctx, params) if params.request_state else self._start(ctx, run)
        try:
            await trip.wait_for_news()
        except anyio.get_cancelled_exc_class():
            trip.scope.cancel()  # the client gave up on the call: so does the relay
            raise
        if trip.done:
            if trip.error is not None:
                raise trip.error
            return trip.result  # type: ignore[return-value]  # what run returned
        questions = trip.take_questions()
        key = secrets.token_urlsafe(16)
        self._waiting[key] = trip
        trip.scope.deadline = anyio.current_time() + self.round_timeout
        return mcp_types.InputRequiredResult(input_requests=questions, request_state=key)

    def _start(
        self, ctx: ServerRequestContext[Any, Any], run: Callable[[Downstream], Awaitable[Any]]
    ) -> _RoundTrips:
        if self._tg is None:
            raise RuntimeError("the relay is not entered")
        if len(self._waiting) >= MAX_WAITING:
            message = f"{MAX_WAITING} calls already wait for their client's answers; retry later"
            raise MCPError(mcp_types.INTERNAL_ERROR, message)
        trip = _RoundTrips(ctx, self.round_timeout)
        self._tg.start_soon(self._run, trip, run)
        return trip

    def _resume(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> _RoundTrips:
        trip = self._waiting.pop(params.request_state or "", None)
        if trip is None:
            message = f"{params.name}: the request state is unknown or expired; call the tool again"
            raise MCPError(mcp_types.INVALID_PARAMS, message)
        trip.ctx = ctx
        trip.scope.deadline = float("inf")
        trip.give_answers(params.input_responses or {})
        return trip

    async def _run(self, trip: _RoundTrips, run: Callable[[Downstream], Awaitable[Any]]) -> None:
        try:
            with trip.scope:
                trip.result = await run(trip)
            if trip.scope.cancelled_caught:
                message = f"the client did not answer within {self.round_timeout:g} s"
                trip.error = MCPError(mcp_types.REQUEST_TIMEOUT, message)
        except Exception as exc:  # the front maps it, as for a call without rounds
            trip.error = exc
        finally:
            trip.finish()
            for key in [k for k, waiting in self._waiting.items() if waiting is trip]:
                del self._waiting[key]

    # -- the registry's handlers ------------------------------------------------------------

    def _downstream(
        self, asker: Asker, what: str, capable: Callable[[Downstream], bool]
    ) -> Downstream | None:
        call = asker.context
        if not isinstance(call, Downstream):
            logger.warning(
                "server %r asked for %s outside a call that can be told (none, or several at "
                "once); answered as a client that cannot",
                asker.server,
                what,
            )
            return None
        if not call.can_ask() or not capable(call):
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
        call = self._downstream(asker, "sampling", _can_sample(params))
        if call is None:
            message = f"the client of mcpmount serve cannot sample (asked by {asker.server!r})"
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
        answer = await call.ask(mcp_types.ElicitRequest(params=params))
        if isinstance(answer, mcp_types.ElicitResult):
            return answer
        return _expected(answer, "an elicitation result")

    async def _roots(self, asker: Asker) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        call = self._downstream(asker, "roots", lambda c: c.capabilities.roots is not None)
        if call is None:
            return mcp_types.ListRootsResult(roots=[])
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


def _result_type(
    request: mcp_types.InputRequest,
) -> (
    type[mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools]
    | type[mcp_types.ElicitResult]
    | type[mcp_types.ListRootsResult]
):
    if isinstance(request, mcp_types.ElicitRequest):
        return mcp_types.ElicitResult
    if isinstance(request, mcp_types.ListRootsRequest):
        return mcp_types.ListRootsResult
    if request.params.tools is not None or request.params.tool_choice is not None:
        return mcp_types.CreateMessageResultWithTools
    return mcp_types.CreateMessageResult


def _error(message: str) -> mcp_types.ErrorData:
    return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)


def _expected(answer: Answer, what: str) -> mcp_types.ErrorData:
    if isinstance(answer, mcp_types.ErrorData):
        return answer
    return _error(f"the client answered with something other than {what}")
