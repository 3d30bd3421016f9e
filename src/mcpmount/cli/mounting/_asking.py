"""What a one-shot command answers when a server asks it something mid-call.

``serve`` offers every server sampling (with tools), elicitation and roots, since it relays
them to its own client; and a server may list some tools only to a client that offers
them (server-everything keeps ``get-roots-list``, ``trigger-sampling-request``,
``trigger-elicitation-request`` and ``trigger-url-elicitation`` for such clients). So the
command line offers the same, and ``tools`` lists what ``serve`` lists. Its answers are
those of a client with no model and nobody to ask: sampling is refused with an error that
says where it works, elicitation is declined, and roots are the config's (``roots``), or
none.
"""

from __future__ import annotations

from typing import Final

import mcp_types

from mcpmount.handlers import Asker, ClientHandlers

__all__ = ["COMMAND_LINE"]

_SAMPLING: Final = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())
"""What ``serve`` offers with sampling (`mcpmount.serve.relay`), offered here the same."""


async def _sample(
    asker: Asker, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.ErrorData:
    del params
    what = f" during {asker.tool}" if asker.tool else ""
    message = (
        f"server {asker.server!r} asked for a model completion{what}; the mcpmount command "
        "line has no model: call it from a host through `mcpmount serve`"
    )
    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=message)


async def _elicit(asker: Asker, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    del asker, params
    return mcp_types.ElicitResult(action="decline")


async def _roots(asker: Asker) -> None:
    del asker  # None: the server is told the config's roots, or none


COMMAND_LINE: Final = ClientHandlers(
    sampling=_sample, sampling_capability=_SAMPLING, elicitation=_elicit, roots=_roots
)
"""The command line's answers, offered as ``serve`` offers its client's."""
