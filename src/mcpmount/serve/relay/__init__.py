"""The relay: what upstream servers ask mid-request, put to the client of that request.

`Relay` (``_relay``) gives the registry client handlers (sampling, elicitation, roots,
approval) that ask the downstream client of the call, prompt or read in flight, and says
when no client can be asked. How that client is asked in each protocol era is
`Downstream`'s and `Rounds`' (``_rounds``): a request on the call's own stream in the
handshake era, ``InputRequiredResult`` rounds in the 2026-07-28 era, each round's state
bound to the principal, method and name that started the call (`mcpmount.serve.access`).
Whose request it is (`client_key`: its session, conversation or principal, ``_whose``)
picks a ``per_client`` server's upstream session for it.
"""

from mcpmount.serve.relay._relay import MAX_URL_ELICITATIONS, Relay
from mcpmount.serve.relay._rounds import MAX_WAITING, Answer, Downstream, Rounds, error
from mcpmount.serve.relay._whose import (
    CONVERSATION_HEADER,
    CONVERSATION_ID,
    PIPE,
    client_key,
    headers_of,
    session_key,
)

__all__ = [
    "CONVERSATION_HEADER",
    "CONVERSATION_ID",
    "MAX_URL_ELICITATIONS",
    "MAX_WAITING",
    "PIPE",
    "Answer",
    "Downstream",
    "Relay",
    "Rounds",
    "client_key",
    "error",
    "headers_of",
    "session_key",
]
