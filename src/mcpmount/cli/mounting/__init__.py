"""The commands that mount a config's servers, then report on them or query what they offer.

``check``, ``status`` and ``lock`` mount every server (``_mount``); ``tools``, ``search``
and ``call`` query the mounted tools (``_query``); ``prompts``, ``resources``, ``read``
and ``prompt`` what servers offer besides tools (``_content``); ``describe`` a tool's
arguments (``_describe``). Each mounts only the servers it needs, from their cached
lists where it may, naming on a terminal those still pending (``_opening``); ``call``
shows a tool's progress (``_progress``); what a server asks mid-call is answered as the
command line can (``_asking``). ``audit`` mounts through `mount_showing` too.
"""

from __future__ import annotations

from mcpmount.cli.mounting._asking import COMMAND_LINE
from mcpmount.cli.mounting._content import run_prompt, run_prompts, run_read, run_resources
from mcpmount.cli.mounting._describe import run_describe
from mcpmount.cli.mounting._mount import run_check, run_lock, run_status
from mcpmount.cli.mounting._opening import mount_showing
from mcpmount.cli.mounting._query import run_call, run_search, run_tools

__all__ = [
    "COMMAND_LINE",
    "mount_showing",
    "run_call",
    "run_check",
    "run_describe",
    "run_lock",
    "run_prompt",
    "run_prompts",
    "run_read",
    "run_resources",
    "run_search",
    "run_status",
    "run_tools",
]
