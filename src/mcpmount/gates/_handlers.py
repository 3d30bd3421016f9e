"""The guard on what a server asks its client, and on what the client answers.

A server's log messages, and what it asks (the messages of a sampling request, the text of
an elicitation), reach the host and through ``serve`` the client and its model: every known
secret is redacted from them first. An answer goes back to the asking server: one that
carries another server's secret (a model that was talked into pasting it, a user who typed
it into the wrong form) is not sent; the server gets an error naming whose it is, never
the value.

Wrapping keeps what the host gave: a handler left out stays out (its capability is not
offered), and one given is called as before, with redacted questions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import mcp_types
import pydantic

from mcpmount.gates._secrets import SecretGuard, json_text
from mcpmount.handlers import (
    Asker,
    ClientHandlers,
    ElicitationHandler,
    LogHandler,
    SamplingHandler,
)

__all__ = ["guarded_handlers"]


def guarded_handlers(
    handlers: ClientHandlers | None, guard: Callable[[], SecretGuard]
) -> ClientHandlers | None:
    """``handlers`` behind the secret guard (``guard`` gives it, once the registry has one)."""
    if handlers is None:
        return None
    return replace(
        handlers,
        sampling=_sampling(handlers.sampling, guard),
        elicitation=_elicitation(handlers.elicitation, guard),
        logging=_logging(handlers.logging, guard),
    )


def _refusal(
    guard: SecretGuard, asker: Asker, answer: pydantic.BaseModel
) -> mcp_types.ErrorData | None:
    """The error the asking server gets instead of an answer carrying another's secret."""
    pattern = guard.index().others(asker.server)
    if pattern is None:
        return None
    text = json_text(answer.model_dump(mode="json", by_alias=True, exclude_none=True))
    if (match := pattern.search(text)) is None:
        return None
    whose = guard.index().whose(match[0])
    message = (
        f"the answer carries a secret of {whose}, and a server's secrets go to that server "
        "only; it was not sent"
    )
    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=message)


def _sampling(
    handler: SamplingHandler | None, guard: Callable[[], SecretGuard]
) -> SamplingHandler | None:
    if handler is None:
        return None

    async def sample(
        asker: Asker, params: mcp_types.CreateMessageRequestParams
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        answer = await handler(asker, guard().redact_model(params))
        if isinstance(answer, mcp_types.ErrorData):
            return answer
        return _refusal(guard(), asker, answer) or answer

    return sample


def _elicitation(
    handler: ElicitationHandler | None, guard: Callable[[], SecretGuard]
) -> ElicitationHandler | None:
    if handler is None:
        return None

    async def elicit(
        asker: Asker, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        answer = await handler(asker, guard().redact_model(params))
        if isinstance(answer, mcp_types.ErrorData):
            return answer
        return _refusal(guard(), asker, answer) or answer

    return elicit


def _logging(handler: LogHandler | None, guard: Callable[[], SecretGuard]) -> LogHandler | None:
    if handler is None:
        return None

    async def log(server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
        await handler(server, guard().redact_model(params))

    return log
