"""Rate limits and concurrency caps of ``serve``'s tool calls: the ``[serve.limits]`` table.

::

    [serve.limits]
    strategy = "moving-window"        # or "fixed-window", "sliding-window-counter"

    [[serve.limits.rule]]             # every token: 60 calls a minute, 4 at once
    rate = "60/minute"
    concurrency = 4

    [[serve.limits.rule]]             # the ci token: 5 creations a minute, all together
    principal = "ci"
    tools = "github__create_*"
    rate = "5/minute"

A call counts against every rule it matches, each principal apart; it is refused when one
of them is spent. Rates are written in the ``limits`` library's notation (``"10/second"``,
``"100 per 2 hours"``), which is checked here, so ``mcpmount check`` reports a typo.
"""

from __future__ import annotations

from typing import Annotated, Literal

import limits
from pydantic import AfterValidator, BaseModel, Field
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA, Text

__all__ = ["LimitRule", "ServeLimits"]


def _rate(value: str) -> str:
    try:
        limits.parse(value)
    except ValueError:
        raise PydanticCustomError(
            "mcpmount_rate",
            'is not a rate: write a count per window, as "60/minute" or "5 per 10 seconds"',
        ) from None
    return value


Rate = Annotated[Text, AfterValidator(_rate)]
"""A rate in the ``limits`` notation: ``"60/minute"``, ``"5 per 10 seconds"``."""


class LimitRule(BaseModel):
    """One limit: how often, and how many at once, a principal may call some tools."""

    model_config = STRICT_DATA

    principal: Text = "*"
    """The principals it applies to, a glob: a static token's name (its
    ``[serve.tokens.NAME]`` key, its ``--token-env`` variable, or ``FILE:LINE`` of a tokens
    file), or an OAuth token's client id (``client/subject`` when it has a subject).
    ``"*"``: every principal (clients without a token are one), each counted apart."""

    tools: Text = "*"
    """The public tool names it applies to, a glob (``"github__create_*"``)."""

    rate: Rate | None = None
    """How many calls a window: ``"60/minute"``, ``"5 per 10 seconds"``; None: no rate."""

    concurrency: int | None = Field(default=None, ge=1)
    """How many calls may run at once; None: no cap."""

    per_tool: bool = False
    """Count each matching tool apart (true), or all the tools it matches together."""


class ServeLimits(BaseModel):
    """The rate limits and concurrency caps of tool calls (``[serve.limits]``)."""

    model_config = STRICT_DATA

    strategy: Literal["moving-window", "fixed-window", "sliding-window-counter"] = "moving-window"
    """How a window counts in the Redis replicas share (the ``limits`` library's
    strategies): ``"moving-window"`` counts exactly the calls of the last window (a
    timestamp per call); ``"fixed-window"`` resets at each window's start (cheapest, allows
    up to twice the rate across a boundary); ``"sliding-window-counter"`` weighs the
    previous window (close to exact, two counters). Counted in a process's own memory, a
    window is always an exact moving window."""

    rule: list[LimitRule] = []
    """The limits, each ``[[serve.limits.rule]]``; a call must pass every one it matches."""
