"""A downstream request in flight, and how its client is asked, in each era.

The request is a ``tools/call``, a ``prompts/get`` or a ``resources/read``: an upstream
server may ask its client while answering any of the three, and each may answer with an
``InputRequiredResult`` in the 2026-07-28 era.

A `Downstream` is what the relay's handlers get as `Asker.context`; ``ask`` reaches its
client:

- Handshake era (up to 2025-11-25): the question goes to that client's session as a
  request related to its ``tools/call``, so streamable HTTP carries it on that call's
  stream; the answer is awaited at most `Rounds.round_timeout` seconds.
- 2026-07-28 era: a server cannot ask its client mid-request. `Rounds.call` runs the
  upstream call in a task it owns, and the request answers with an
  ``InputRequiredResult`` holding the questions asked so far; the client answers them and
  calls again with ``inputResponses`` and the ``requestState`` (a one-time random key of
  the waiting call), which resumes that call. A client that never comes back: the waiting
  call is cancelled after `Rounds.round_timeout` seconds, and its key forgotten. A
  client whose request offers none of sampling, elicitation and roots can be asked
  nothing (the relay answers the server for it): its call runs in its request's task.

  A key is bound to what started the call: the principal (`mcpmount.serve.access`), the
  method and the name. A retry that differs in any of them is answered as an unknown or
  expired key, and the key stays its owner's.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast

import anyio
import mcp_types
from anyio.abc import TaskGroup
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.serve.access import Principal, principal_of
from mcpmount.serve.relay._whose import client_key
from mcpmount.upstream import ClientKey

__all__ = ["MAX_WAITING", "Answer", "Downstream", "Rounds", "error", "result_type"]

MAX_WAITING: Final = 1000
"""How many 2026-era calls may wait for their client's answers at once."""

Answer = mcp_types.InputResponse | mcp_types.ErrorData
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Owner:
    """What started a 2026-era call: only the same may resume it."""

    principal: Principal
    method: str
    name: str


class Downstream:
    """One downstream request in flight (a tool call, a prompt, a read), as the relay's
    handlers see it.

    Args:
        ctx: The request context of the call (of its latest round, in the 2026 era).
        timeout: Seconds one question may wait for the client's answer.
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float) -> None:
        self.ctx = ctx
        self.timeout = timeout

    @property
    def client_key(self) -> ClientKey:
        """Whose request this is: a ``per_client`` server serves it over that client's own
        upstream session, whose questions then come to this client only."""
        return client_key(self.ctx)

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
                request, result_type(request), self.timeout, metadata=metadata
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
            return error("the call already ended")
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
            if response is not None and _answers(request, response):
                self._release(key, response)
            else:
                self._release(key, error(f"the client gave no answer to {request.method}"))

    def finish(self) -> None:
        """The call ended: release every question still waiting, with an error."""
        self.done = True
        for key in [*self._asked, *self._sent]:
            self._release(key, error("the call ended before the client answered"))
        self._asked.clear()
        self._sent.clear()
        self._wake.set()

    def _release(self, key: str, answer: Answer) -> None:
        self._answers[key] = answer
        self._answered.pop(key).set()


class Rounds:
    """The 2026-era calls waiting for their clients; run it (`running`) while serving.

    Args:
        round_timeout: Seconds a question waits for its answer (handshake era), and a
            2026-era call for its client to come back with the answers.
    """

    def __init__(self, round_timeout: float) -> None:
        self.round_timeout = round_timeout
        self._waiting: dict[str, tuple[_RoundTrips, _Owner]] = {}
        self._tg: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[Rounds]:
        """Own the 2026-era calls while entered; leaving cancels those still running."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield self
            finally:
                self._tg = None
                self._waiting.clear()
                tg.cancel_scope.cancel()

    async def call(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.InputResponseRequestParams,
        name: str,
        run: Callable[[Downstream], Awaitable[T]],
    ) -> T | mcp_types.InputRequiredResult:
        """Run one round of a request: ``run`` is the upstream call, given its `Downstream`;
        ``name`` (the tool, prompt or resource URI) names the request in errors.

        Raises:
            MCPError: A 2026-era retry names no waiting call (unknown or expired).
            Exception: What ``run`` raised.
        """
        waiting = params.request_state
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (
            waiting or _may_be_asked(ctx)
        ):
            # No rounds to run: the handshake era asks on the call's own stream, and a
            # client that offers no sampling, elicitation or roots is never asked (the
            # relay answers the server for it), so the call runs in the request's task.
            return await run(Downstream(ctx, self.round_timeout))
        owner = _Owner(principal_of(ctx), ctx.method, name)
        trip = self._resume(ctx, params, owner) if waiting else self._start(ctx, run)
        try:
            await trip.wait_for_news()
        except anyio.get_cancelled_exc_class():
            trip.scope.cancel()  # the client gave up on the call: so does the relay
            raise
        if trip.done:
            if trip.error is not None:
                raise trip.error
            return cast("T", trip.result)  # what run returned
        questions = trip.take_questions()
        key = secrets.token_urlsafe(16)
        self._waiting[key] = (trip, owner)
        trip.scope.deadline = anyio.current_time() + self.round_timeout
        return mcp_types.InputRequiredResult(input_requests=questions, request_state=key)

    def _start(
        self, ctx: ServerRequestContext[Any, Any], run: Callable[[Downstream], Awaitable[Any]]
    ) -> _RoundTrips:
        if self._tg is None:
            raise RuntimeError("the rounds are not running (enter Rounds.running)")
        if len(self._waiting) >= MAX_WAITING:
            message = f"{MAX_WAITING} calls already wait for their client's answers; retry later"
            raise MCPError(mcp_types.INTERNAL_ERROR, message)
        trip = _RoundTrips(ctx, self.round_timeout)
        self._tg.start_soon(self._run, trip, run)
        return trip

    def _resume(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.InputResponseRequestParams,
        owner: _Owner,
    ) -> _RoundTrips:
        key = params.request_state or ""
        waiting = self._waiting.get(key)
        if waiting is None or waiting[1] != owner:
            message = (
                f"{owner.name}: the request state is unknown or expired; send the request again"
            )
            raise MCPError(mcp_types.INVALID_PARAMS, message)
        del self._waiting[key]
        trip = waiting[0]
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
            for key in [k for k, (waiting, _) in self._waiting.items() if waiting is trip]:
                del self._waiting[key]


def _may_be_asked(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the request's client offers anything the relay may ask it."""
    offered = ctx.session.client_capabilities
    return offered is not None and (
        offered.sampling is not None or offered.elicitation is not None or offered.roots is not None
    )


def result_type(
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


def _answers(request: mcp_types.InputRequest, response: mcp_types.InputResponse) -> bool:
    """Whether ``response`` answers ``request`` (either sampling shape answers sampling)."""
    if isinstance(request, mcp_types.CreateMessageRequest):
        sampled = mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools
        return isinstance(response, sampled)
    return isinstance(response, result_type(request))


def error(message: str) -> mcp_types.ErrorData:
    """An internal-error answer saying ``message``."""
    return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)
