"""Child processes and how they end: a process group per child, stopped and swept.

`ProcessGroup` (``_procgroup``, with what ``/proc`` tells of it: ``_proc``) runs on Linux
under a subreaper launcher (``_launcher``), so that daemons that leave the group are
ended too; a watchdog ends them if this process dies without closing them (`Reaper`,
``_reaper``); short-lived helper programs (``headers_command``, ``before_call``) run
bounded and reaped (`run_program`, ``_program``). Knows nothing of MCP; a stdio server
is one such group.
"""

from mcpmount.processes._procgroup import STOP_BOUND, ProcessGroup, group_members
from mcpmount.processes._program import ProgramRun, first_line, run_program
from mcpmount.processes._reaper import Reaper

__all__ = [
    "STOP_BOUND",
    "ProcessGroup",
    "ProgramRun",
    "Reaper",
    "first_line",
    "group_members",
    "run_program",
]
