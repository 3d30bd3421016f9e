"""Rate limits and concurrency caps of ``serve``'s tool calls (``[serve.limits]``).

- `Quotas` (``_middleware``): the server middleware, behind the front's access gate, that
  refuses a call past a limit with an ``isError`` result saying which limit and when to
  retry.
- `Counters` (``_counters``): the windows, counted by the ``limits`` library in this
  process's memory, or in the Redis that replicas share (``[serve] shared_state``).
- `Rules` and `InFlight` (``_rules``): which rules a call matches; the calls running now.

Concurrency caps are counted by each process: with replicas, each allows that many.
"""

from mcpmount.serve.quotas._counters import Counters, Spent, Strategy
from mcpmount.serve.quotas._middleware import LIMIT_META, Limits, Quotas

__all__ = ["LIMIT_META", "Counters", "Limits", "Quotas", "Spent", "Strategy"]
