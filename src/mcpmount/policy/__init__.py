"""Policy: which tools, prompts and resources each client of ``serve`` may see and use.

Policies are written in Cedar (https://www.cedarpolicy.com), in a file named by
``[serve] policy``, and decided by the ``cedarpy`` engine (Rust): ``permit`` and ``forbid``
over a client's token attributes (`Subject`) and a thing's name (``like "github__*"``)
and server. Cedar rather than an expression language (CEL): default deny with forbid
overriding permit is what a gateway's rules need, ``like`` matches names by wildcards,
and its schema lets ``check`` refuse a policy that names an unknown attribute or reads a
claim without first asking whether the token has it.

- `read_policy` (``_decide``): read and validate a file, each problem at its line (``_load``).
- `Policy` (``_decide``): its cached decisions; `Subject` and `SCHEMA` (``_schema``): what
  a policy may speak of.

The visibility door of ``serve`` (`mcpmount.serve.access.Door`) asks it: a denied thing is
answered exactly as one that does not exist.
"""

from mcpmount.policy._decide import Policy, read_policy
from mcpmount.policy._load import policy_problems
from mcpmount.policy._schema import SCHEMA, Kind, Subject

__all__ = ["SCHEMA", "Kind", "Policy", "Subject", "policy_problems", "read_policy"]
